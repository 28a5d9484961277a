package nn

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
)

// TorchLinear is torch.nn.Linear(in_features = x's last dimension, out)
// with torch's variables: weight [out, in] and bias [out] in scope (so
// scope "fc" loads torch's fc.weight and fc.bias), U(±1/√in) as torch
// initialises them; x·weightᵀ + bias over x's last axis. bias false is
// torch's bias=False. (Linear keeps GoMLX's names and layout, "dense/weights"
// [in, out], for the checkpoints and parity cases written with it.)
func TorchLinear(scope *model.Scope, x *graph.Node, out int, bias bool) *graph.Node {
	var biasInit model.VariableInitializer
	if bias {
		biasInit = fanInInit(scope, x.Shape().Dim(-1))
	}
	return torchLinear(scope, x, out, biasInit)
}

// torchLinear is TorchLinear with biasInit as the bias's initialiser, no
// bias when it is nil.
func torchLinear(scope *model.Scope, x *graph.Node, out int, biasInit model.VariableInitializer) *graph.Node {
	if x.Rank() < 1 || out < 1 {
		panic(fmt.Sprintf("nn.TorchLinear: x must have a feature axis and out must be positive, got %s and %d", x.Shape(), out))
	}
	in := x.Shape().Dim(-1)
	g, dtype := x.Graph(), x.DType()
	w := param(scope, "nn.TorchLinear", "weight", dtype, fanInInit(scope, in), out, in).NodeValue(g)
	y := graph.DotGeneral(x, []int{x.Rank() - 1}, nil, w, []int{1}, nil)
	if biasInit != nil {
		b := param(scope, "nn.TorchLinear", "bias", dtype, biasInit, out).NodeValue(g)
		y = graph.Add(y, graph.ExpandLeftToRank(b, y.Rank()))
	}
	return y
}
