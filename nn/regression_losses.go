package nn

import (
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/core/graph"
)

// MSELoss is torch.nn.MSELoss: the squared differences of input and
// target, reduced (Reduce; the mean by default). The shapes must be equal
// (PyTorch broadcasts them with a warning: a [B] target against a [B, 1]
// output is a [B, B] mean, the classic mistake); the panic names both.
func MSELoss(input, target *graph.Node, opts ...LossOption) *graph.Node {
	c := lossOptions("MSELoss", opts, "Reduce")
	if !slices.Equal(input.Shape().Dimensions, target.Shape().Dimensions) {
		panic(fmt.Sprintf("nn.MSELoss: input %v and target %v must have the same shape (a regression label of one value per example is []float32{y}, shape [B, 1])",
			input.Shape().Dimensions, target.Shape().Dimensions))
	}
	return c.reduce(graph.Square(graph.Sub(input, graph.ConvertDType(target, input.DType()))))
}

// L1Loss is torch.nn.L1Loss: the absolute differences, reduced.
func L1Loss(input, target *graph.Node, opts ...LossOption) *graph.Node {
	c := lossOptions("L1Loss", opts, "Reduce")
	sameShape("L1Loss", input, target)
	return c.reduce(graph.Abs(graph.Sub(input, graph.ConvertDType(target, input.DType()))))
}

// SmoothL1Loss is torch.nn.SmoothL1Loss(beta=1): for d = input − target,
// 0.5·d²/beta where |d| < beta, else |d| − 0.5·beta; reduced. Beta 0 is
// L1Loss.
func SmoothL1Loss(input, target *graph.Node, opts ...LossOption) *graph.Node {
	c := lossOptions("SmoothL1Loss", opts, "Reduce", "Beta")
	if c.beta < 0 {
		panic(fmt.Sprintf("nn.SmoothL1Loss: Beta must be ≥ 0, got %v", c.beta))
	}
	sameShape("SmoothL1Loss", input, target)
	d := graph.Abs(graph.Sub(input, graph.ConvertDType(target, input.DType())))
	if c.beta == 0 {
		return c.reduce(d)
	}
	quadratic := graph.DivScalar(graph.MulScalar(graph.Square(d), 0.5), c.beta)
	linear := graph.AddScalar(d, -0.5*c.beta)
	return c.reduce(graph.Where(graph.LessThan(d, graph.Scalar(d.Graph(), d.DType(), c.beta)), quadratic, linear))
}
