package nn

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
)

// GroupNorm is torch.nn.GroupNorm(groups, C) on x [N, C, …]: each
// example's channels split into groups, each group normalised over its
// channels and positions with the biased variance and epsilon 1e-5, then
// scaled by weight [C] (ones) and shifted by bias [C] (zeros), torch's
// names in scope.
func GroupNorm(scope *model.Scope, x *graph.Node, groups int) *graph.Node {
	if x.Rank() < 2 || groups < 1 || x.Shape().Dim(1)%groups != 0 {
		panic(fmt.Sprintf("nn.GroupNorm: x must be [N, C, …] with C divisible by groups %d, got %s", groups, x.Shape()))
	}
	dims := x.Shape().Dimensions
	n, c := dims[0], dims[1]
	grouped := graph.Reshape(x, n, groups, -1)
	mean := graph.ReduceAndKeep(grouped, graph.ReduceMean, 2)
	centered := graph.Sub(grouped, mean)
	variance := graph.ReduceAndKeep(graph.Square(centered), graph.ReduceMean, 2)
	normed := graph.Reshape(graph.Div(centered, graph.Sqrt(graph.AddScalar(variance, LayerNormEps))), dims...)
	g, dtype := x.Graph(), x.DType()
	weight := param(scope, "nn.GroupNorm", "weight", dtype, constInit(1), c).NodeValue(g)
	bias := param(scope, "nn.GroupNorm", "bias", dtype, constInit(0), c).NodeValue(g)
	axes := []int{0}
	for i := 2; i < x.Rank(); i++ {
		axes = append(axes, i)
	}
	return graph.Add(graph.Mul(normed, graph.ExpandAxes(weight, axes...)), graph.ExpandAxes(bias, axes...))
}
