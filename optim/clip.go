package optim

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
)

// clipEps is the term torch.nn.utils.clip_grad_norm_ adds to the total norm
// before dividing max_norm by it.
const clipEps = 1e-6

// checkNormType panics unless p is a valid norm order: a finite number > 0 or
// +Inf.
func checkNormType(fn string, p float64) {
	if math.IsNaN(p) || p <= 0 || math.IsInf(p, -1) {
		panic(fmt.Sprintf("optim.%s: p must be a number > 0 or math.Inf(1) (e.g. 1, 2, +Inf), got %v", fn, p))
	}
}

// NormOf returns the p-norm of one tensor, over all its elements, as a scalar
// of x's dtype: sum(|x|) for p = 1, sqrt(sum(x²)) for p = 2, max(|x|) for
// p = math.Inf(1) and (sum(|x|^p))^(1/p) otherwise, like torch.norm. It
// panics if p is not > 0.
func NormOf(x *graph.Node, p float64) *graph.Node {
	checkNormType("NormOf", p)
	g := x.Graph()
	switch {
	case math.IsInf(p, 1):
		if x.Shape().Size() == 0 {
			return graph.ScalarZero(g, x.DType())
		}
		return graph.ReduceAllMax(graph.Abs(x))
	case p == 1:
		return graph.ReduceAllSum(graph.Abs(x))
	case p == 2:
		return graph.Sqrt(graph.ReduceAllSum(graph.Square(x)))
	default:
		c := func(v float64) *graph.Node { return graph.ConstAsDType(g, x.DType(), v) }
		return graph.Pow(graph.ReduceAllSum(graph.Pow(graph.Abs(x), c(p))), c(1/p))
	}
}

// gradNormDType is the dtype of GradNorm's result: float64 if any gradient is
// float64, float32 otherwise.
func gradNormDType(grads []*graph.Node) dtypes.DType {
	for _, g := range grads {
		if g.DType() == dtypes.Float64 {
			return dtypes.Float64
		}
	}
	return dtypes.Float32
}

// GradNorm returns the p-norm over all gradients together (p = 1, 2,
// math.Inf(1), or any other p > 0), computed as
// torch.nn.utils.clip_grad_norm_ computes total_norm: the p-norm of the
// per-tensor p-norms (their maximum for p = +Inf). The result is a scalar,
// float64 if any gradient is float64 and float32 otherwise; each gradient is
// converted to that dtype first. It panics if grads is empty or p is not > 0.
func GradNorm(grads []*graph.Node, p float64) *graph.Node {
	checkNormType("GradNorm", p)
	if len(grads) == 0 {
		panic("optim.GradNorm: grads is empty; pass at least one gradient")
	}
	dtype := gradNormDType(grads)
	norms := make([]*graph.Node, len(grads))
	for i, grad := range grads {
		if grad.DType() != dtype {
			grad = graph.ConvertDType(grad, dtype)
		}
		norms[i] = NormOf(grad, p)
	}
	if len(norms) == 1 {
		return norms[0]
	}
	return NormOf(graph.Stack(norms, 0), p)
}

// ClipByGlobalNorm scales all grads by min(1, maxNorm/(total+1e-6)), where
// total is GradNorm(grads, p), exactly like torch.nn.utils.clip_grad_norm_
// (whose default norm_type is 2). It returns the clipped gradients, each in
// its own dtype, and the total norm before clipping. As in PyTorch, a
// non-finite total yields non-finite gradients. It panics if maxNorm is
// negative or NaN, or p is not > 0.
func ClipByGlobalNorm(grads []*graph.Node, maxNorm, p float64) (clipped []*graph.Node, total *graph.Node) {
	if math.IsNaN(maxNorm) || maxNorm < 0 {
		panic(fmt.Sprintf("optim.ClipByGlobalNorm: maxNorm must be >= 0, got %v", maxNorm))
	}
	total = GradNorm(grads, p)
	g := total.Graph()
	dtype := total.DType()
	coef := graph.Div(graph.ConstAsDType(g, dtype, maxNorm), graph.AddScalar(total, clipEps))
	coef = graph.Min(coef, graph.ScalarOne(g, dtype))
	clipped = make([]*graph.Node, len(grads))
	for i, grad := range grads {
		c := coef
		if grad.DType() != dtype {
			c = graph.ConvertDType(coef, grad.DType())
		}
		clipped[i] = graph.Mul(grad, c)
	}
	return clipped, total
}

// ClipByValue clamps every gradient element to [-v, v], like
// torch.nn.utils.clip_grad_value_. It panics if v is negative or NaN.
func ClipByValue(grads []*graph.Node, v float64) []*graph.Node {
	if math.IsNaN(v) || v < 0 {
		panic(fmt.Sprintf("optim.ClipByValue: v must be >= 0, got %v", v))
	}
	clipped := make([]*graph.Node, len(grads))
	for i, grad := range grads {
		clipped[i] = graph.ClipScalar(grad, -v, v)
	}
	return clipped
}
