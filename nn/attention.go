package nn

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
)

// AttentionBuilder configures a torch.nn.MultiheadAttention:
// MultiheadAttention starts it, Done applies it.
type AttentionBuilder struct {
	scope                    *model.Scope
	query, key, value        *graph.Node
	heads                    int
	bias                     bool
	causal                   bool
	attnMask, keyPaddingMask *graph.Node
}

// MultiheadAttention is torch.nn.MultiheadAttention(embed_dim, heads,
// batch_first=True) on query [N, L, E], key and value [N, S, E] (the same
// node for self-attention): torch's variables in scope, in_proj_weight
// [3E, E] (the query, key and value projections stacked, xavier-uniform),
// in_proj_bias [3E] (zeros) and out_proj.weight [E, E], out_proj.bias [E]
// (zeros), so a torch state dict loads as it is. E must divide by heads.
// Dropout on the attention weights (torch's dropout=, 0 by default) is
// not supported; kdim and vdim other than E are not either.
func MultiheadAttention(scope *model.Scope, query, key, value *graph.Node, heads int) *AttentionBuilder {
	if query.Rank() != 3 || key.Rank() != 3 || value.Rank() != 3 {
		panic(fmt.Sprintf("nn.MultiheadAttention: query, key and value must be [N, L, E] (batch first), got %s, %s, %s", query.Shape(), key.Shape(), value.Shape()))
	}
	e := query.Shape().Dim(2)
	if heads < 1 || e%heads != 0 || key.Shape().Dim(2) != e || value.Shape().Dim(2) != e || key.Shape().Dim(1) != value.Shape().Dim(1) {
		panic(fmt.Sprintf("nn.MultiheadAttention: embed_dim %d must divide by heads %d, and key %s and value %s be [N, S, %d]", e, heads, key.Shape(), value.Shape(), e))
	}
	return &AttentionBuilder{scope: scope, query: query, key: key, value: value, heads: heads, bias: true}
}

// NoBias is torch's bias=False: no in_proj_bias and no out_proj.bias.
func (a *AttentionBuilder) NoBias() *AttentionBuilder {
	a.bias = false
	return a
}

// Causal masks every key after the query's position (attn_mask =
// torch.nn.Transformer.generate_square_subsequent_mask(L)); L must equal S.
func (a *AttentionBuilder) Causal() *AttentionBuilder {
	a.causal = true
	return a
}

// AttnMask is torch's attn_mask= [L, S]: a bool mask whose true entries
// may not be attended to, or a float mask added to the scores.
func (a *AttentionBuilder) AttnMask(mask *graph.Node) *AttentionBuilder {
	a.attnMask = mask
	return a
}

// KeyPaddingMask is torch's key_padding_mask= [N, S], bool: true marks a
// padding key that no query attends to.
func (a *AttentionBuilder) KeyPaddingMask(mask *graph.Node) *AttentionBuilder {
	a.keyPaddingMask = mask
	return a
}

// Done returns the attention's output [N, L, E] and its weights [N, L, S]
// averaged over the heads (torch's need_weights=True,
// average_attn_weights=True). A query whose keys are all masked gets NaN,
// as in torch.
func (a *AttentionBuilder) Done() (output, weights *graph.Node) {
	g, dtype := a.query.Graph(), a.query.DType()
	n, l, e := a.query.Shape().Dim(0), a.query.Shape().Dim(1), a.query.Shape().Dim(2)
	s, d := a.key.Shape().Dim(1), e/a.heads
	inW := param(a.scope, "nn.MultiheadAttention", "in_proj_weight", dtype, uniformInit(a.scope, math.Sqrt(6/float64(e+3*e))), 3*e, e).NodeValue(g)
	var inB *graph.Node
	if a.bias {
		inB = param(a.scope, "nn.MultiheadAttention", "in_proj_bias", dtype, constInit(0), 3*e).NodeValue(g)
	}
	project := func(x *graph.Node, i, length int) *graph.Node { // [N, length, E] → [N, heads, length, d]
		w := graph.Slice(inW, graph.AxisRange(i*e, (i+1)*e))
		y := graph.DotGeneral(x, []int{2}, nil, w, []int{1}, nil)
		if inB != nil {
			y = graph.Add(y, graph.ExpandLeftToRank(graph.Slice(inB, graph.AxisRange(i*e, (i+1)*e)), 3))
		}
		return graph.TransposeAllAxes(graph.Reshape(y, n, length, a.heads, d), 0, 2, 1, 3)
	}
	q, k, v := project(a.query, 0, l), project(a.key, 1, s), project(a.value, 2, s)
	scores := graph.DotGeneral(q, []int{3}, []int{0, 1}, k, []int{3}, []int{0, 1}) // [N, heads, L, S]
	scores = graph.MulScalar(scores, 1/math.Sqrt(float64(d)))
	scores = a.mask(scores, l, s)
	attn := graph.Softmax(scores, -1)
	out := graph.DotGeneral(attn, []int{3}, []int{0, 1}, v, []int{2}, []int{0, 1}) // [N, heads, L, d]
	out = graph.Reshape(graph.TransposeAllAxes(out, 0, 2, 1, 3), n, l, e)
	var outBias = constInit(0)
	if !a.bias {
		outBias = nil
	}
	output = torchLinear(a.scope.In("out_proj"), out, e, outBias)
	return output, graph.ReduceMean(attn, 1)
}

// mask adds the causal, attn and key-padding masks to scores [N, heads,
// L, S] as −∞ (or the float attn mask's values).
func (a *AttentionBuilder) mask(scores *graph.Node, l, s int) *graph.Node {
	g, dtype := scores.Graph(), scores.DType()
	negInf := graph.Scalar(g, dtype, math.Inf(-1))
	blocked := func(mask *graph.Node, shape []int) *graph.Node { // bool mask broadcast to scores → −∞ where true
		mask = graph.BroadcastToDims(graph.Reshape(mask, shape...), scores.Shape().Dimensions...)
		return graph.Where(mask, graph.BroadcastToDims(negInf, scores.Shape().Dimensions...), scores)
	}
	if a.causal {
		if l != s {
			panic(fmt.Sprintf("nn.MultiheadAttention: Causal needs as many queries as keys, got L %d and S %d", l, s))
		}
		rows := graph.Iota(g, graphShape(dtypes.Int32, l, s), 0)
		cols := graph.Iota(g, graphShape(dtypes.Int32, l, s), 1)
		scores = blocked(graph.GreaterThan(cols, rows), []int{1, 1, l, s})
	}
	if m := a.attnMask; m != nil {
		if m.Rank() != 2 || m.Shape().Dim(0) != l || m.Shape().Dim(1) != s {
			panic(fmt.Sprintf("nn.MultiheadAttention: AttnMask must be [L, S] = [%d, %d], got %s", l, s, m.Shape()))
		}
		if m.DType().IsFloat() {
			scores = graph.Add(scores, graph.Reshape(graph.ConvertDType(m, dtype), 1, 1, l, s))
		} else {
			scores = blocked(m, []int{1, 1, l, s})
		}
	}
	if m := a.keyPaddingMask; m != nil {
		n := scores.Shape().Dim(0)
		if m.Rank() != 2 || m.Shape().Dim(0) != n || m.Shape().Dim(1) != s || m.DType().IsFloat() {
			panic(fmt.Sprintf("nn.MultiheadAttention: KeyPaddingMask must be bool [N, S] = [%d, %d], got %s", n, s, m.Shape()))
		}
		scores = blocked(m, []int{n, 1, 1, s})
	}
	return scores
}
