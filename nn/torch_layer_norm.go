package nn

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
)

// TorchLayerNorm is torch.nn.LayerNorm(x's last dimension, eps=1e-5)
// with torch's variables: weight (ones) and bias (zeros) in scope, so
// "norm1" loads torch's norm1.weight and norm1.bias. (LayerNorm computes
// the same with GoMLX's variable names.)
func TorchLayerNorm(scope *model.Scope, x *graph.Node) *graph.Node {
	if x.Rank() < 1 {
		panic(fmt.Sprintf("nn.TorchLayerNorm: x must have a feature axis, got %s", x.Shape()))
	}
	d, g, dtype := x.Shape().Dim(-1), x.Graph(), x.DType()
	mean := graph.ReduceAndKeep(x, graph.ReduceMean, -1)
	centered := graph.Sub(x, mean)
	variance := graph.ReduceAndKeep(graph.Square(centered), graph.ReduceMean, -1)
	normed := graph.Div(centered, graph.Sqrt(graph.AddScalar(variance, LayerNormEps)))
	weight := param(scope, "nn.TorchLayerNorm", "weight", dtype, constInit(1), d).NodeValue(g)
	bias := param(scope, "nn.TorchLayerNorm", "bias", dtype, constInit(0), d).NodeValue(g)
	return graph.Add(graph.Mul(normed, graph.ExpandLeftToRank(weight, x.Rank())), graph.ExpandLeftToRank(bias, x.Rank()))
}
