package nn

import (
	"math"

	"github.com/gomlx/gomlx/core/graph"
)

// torch.nn's activations, as functions of the node (torch's modules have
// no parameters).

// GELU is torch.nn.GELU(): x·Φ(x) = 0.5·x·(1 + erf(x/√2)), the exact form.
func GELU(x *graph.Node) *graph.Node { return gelu(x) }

// GELUTanh is torch.nn.GELU(approximate="tanh"): 0.5·x·(1 + tanh(√(2/π)·(x
// + 0.044715·x³))), GPT-2's "gelu_new".
func GELUTanh(x *graph.Node) *graph.Node {
	inner := graph.MulScalar(graph.Add(x, graph.MulScalar(graph.Mul(graph.Square(x), x), 0.044715)), math.Sqrt(2/math.Pi))
	return graph.Mul(graph.MulScalar(x, 0.5), graph.OnePlus(graph.Tanh(inner)))
}

// SiLU is torch.nn.SiLU: x·sigmoid(x).
func SiLU(x *graph.Node) *graph.Node { return graph.Mul(x, graph.Sigmoid(x)) }

// Sigmoid is torch.nn.Sigmoid.
func Sigmoid(x *graph.Node) *graph.Node { return graph.Sigmoid(x) }

// Tanh is torch.nn.Tanh.
func Tanh(x *graph.Node) *graph.Node { return graph.Tanh(x) }

// LeakyReLU is torch.nn.LeakyReLU(negative_slope): x where x ≥ 0, else
// slope·x (torch's default slope is 0.01).
func LeakyReLU(x *graph.Node, slope float64) *graph.Node {
	return graph.Where(graph.GreaterThan(x, graph.ZerosLike(x)), x, graph.MulScalar(x, slope))
}

// ELU is torch.nn.ELU(alpha): x where x > 0, else alpha·(exp(x) − 1)
// (torch's default alpha is 1).
func ELU(x *graph.Node, alpha float64) *graph.Node {
	negative := graph.MulScalar(graph.AddScalar(graph.Exp(graph.Min(x, graph.ZerosLike(x))), -1), alpha) // GoMLX has no gradient for Expm1
	return graph.Where(graph.GreaterThan(x, graph.ZerosLike(x)), x, negative)
}

// Softmax is torch.nn.Softmax(dim=axis).
func Softmax(x *graph.Node, axis int) *graph.Node { return graph.Softmax(x, axis) }

// LogSoftmax is torch.nn.LogSoftmax(dim=axis).
func LogSoftmax(x *graph.Node, axis int) *graph.Node { return graph.LogSoftmax(x, axis) }
