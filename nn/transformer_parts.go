package nn

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
)

// layerParts is what torch's TransformerEncoderLayer and
// TransformerDecoderLayer share: their options, dropout, feed-forward
// block and residual sublayers.
type layerParts struct {
	scope           *model.Scope
	heads, ff       int
	dropout         float64
	gelu, normFirst bool
}

// newLayerParts returns torch's defaults: dim_feedforward 2048, dropout 0.1.
func newLayerParts(scope *model.Scope, heads int) layerParts {
	return layerParts{scope: scope, heads: heads, ff: 2048, dropout: 0.1}
}

// check panics, naming layer, on options torch would refuse.
func (p layerParts) check(layer string) {
	if p.dropout < 0 || p.dropout >= 1 || p.ff < 1 {
		panic(fmt.Sprintf("nn.%s: dropout must be in [0, 1) and dim_feedforward positive, got %v and %d", layer, p.dropout, p.ff))
	}
}

// drop is torch's Dropout(p.dropout) named name, nothing when it is 0.
func (p layerParts) drop(name string, x *graph.Node) *graph.Node {
	if p.dropout == 0 {
		return x
	}
	return layers.DropoutStatic(p.scope.In("%s", name), x, p.dropout)
}

// feedForward is linear2(dropout(activation(linear1(x)))) followed by the
// dropout named outDropout.
func (p layerParts) feedForward(x *graph.Node, outDropout string) *graph.Node {
	h := TorchLinear(p.scope.In("linear1"), x, p.ff, true)
	if p.gelu {
		h = gelu(h)
	} else {
		h = ReLU(h)
	}
	h = p.drop("dropout", h)
	return p.drop(outDropout, TorchLinear(p.scope.In("linear2"), h, x.Shape().Dim(2), true))
}

// sublayer is one residual block of a layer: f, with the TorchLayerNorm in
// scope norm.
type sublayer struct {
	norm string
	f    func(x *graph.Node) *graph.Node
}

// residuals applies the sublayers in order: x + f(norm(x)) each with
// norm_first (pre-norm), else norm(x + f(x)) (post-norm, torch's default).
func (p layerParts) residuals(x *graph.Node, blocks ...sublayer) *graph.Node {
	for _, s := range blocks {
		norm := p.scope.In("%s", s.norm)
		if p.normFirst {
			x = graph.Add(x, s.f(TorchLayerNorm(norm, x)))
		} else {
			x = TorchLayerNorm(norm, graph.Add(x, s.f(x)))
		}
	}
	return x
}

// gelu is torch's exact GELU: x·Φ(x) = 0.5·x·(1 + erf(x/√2)).
func gelu(x *graph.Node) *graph.Node {
	return graph.Mul(graph.MulScalar(x, 0.5), graph.OnePlus(graph.Erf(graph.MulScalar(x, 1/math.Sqrt2))))
}
