package golower

import (
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/internal/bngolden"
)

// bnTolerance is the largest difference allowed from PyTorch's float32
// results (absolute up to 1, relative above; see bngolden.MaxDiff).
const bnTolerance = 1e-5

// TestBatchNormLoweringMatchesPyTorch: BatchNormForTraining (normalized
// output, batch mean and biased variance), its gradient through
// BatchNormGradient (GoMLX's VJP of the training op) and
// BatchNormForInference, lowered on the Go backend, equal PyTorch's
// BatchNorm1d/2d on the goldens within bnTolerance, with channels on axis
// 1 as PyTorch has them and moved last (featureAxis -1).
func TestBatchNormLoweringMatchesPyTorch(t *testing.T) {
	backend := Wrap(gobackend.GetBackend()).(*Backend)
	for _, c := range bngolden.Load(t) {
		for _, channelsLast := range []bool{false, true} {
			name := c.Name
			if channelsLast {
				name += "_channels_last"
			}
			t.Run(name, func(t *testing.T) {
				layout := newBNLayout(c.Shape, channelsLast)
				weight, bias := c.Weight, c.Bias
				if !c.Affine {
					weight, bias = constantSlice(c.Shape[1], 1), constantSlice(c.Shape[1], 0)
				}
				train := MustNewExec(backend, func(x, w, b, gy *Node) []*Node {
					x, gy = layout.in(x), layout.in(gy)
					y, mean, variance := InternalBatchNormForTraining(x, w, b, float32(c.Eps), layout.axis)
					grads := Gradient(ReduceAllSum(Mul(y, gy)), x, w, b)
					return []*Node{layout.out(y), mean, variance, layout.out(grads[0]), grads[1], grads[2]}
				})
				for i, step := range c.Steps {
					outs := train.MustCall(tensors.FromFlatDataAndDimensions(step.X, c.Shape...),
						tensors.FromValue(weight), tensors.FromValue(bias),
						tensors.FromFlatDataAndDimensions(step.GradY, c.Shape...))
					want := [][]float32{step.Y, step.BatchMean, step.BatchVar, step.GradX}
					names := []string{"y", "batch_mean", "batch_var", "grad_x"}
					if c.Affine {
						want, names = append(want, step.GradWeight, step.GradBias), append(names, "grad_weight", "grad_bias")
					}
					for j := range want {
						checkBN(t, i, names[j], tensors.MustCopyFlatData[float32](outs[j]), want[j])
					}
				}
				last := c.Steps[len(c.Steps)-1]
				eval := MustNewExec(backend, func(x, w, b, mean, variance *Node) *Node {
					return layout.out(InternalBatchNormForInference(layout.in(x), w, b, mean, variance,
						float32(c.Eps), layout.axis))
				})
				y := eval.MustCall(tensors.FromFlatDataAndDimensions(c.Eval.X, c.Shape...), tensors.FromValue(weight),
					tensors.FromValue(bias), tensors.FromValue(last.RunningMean), tensors.FromValue(last.RunningVar))[0]
				checkBN(t, -1, "eval y", tensors.MustCopyFlatData[float32](y), c.Eval.Y)
			})
		}
	}
	if backend.LoweredBatchNorms() == 0 {
		t.Error("no batch normalization was lowered")
	}
}

func checkBN(t *testing.T, step int, what string, got, want []float32) {
	t.Helper()
	diff, at := bngolden.MaxDiff(t, what, got, want)
	if testing.Verbose() {
		t.Logf("step %d %s: max difference from PyTorch %.3g", step, what, diff)
	}
	if diff > bnTolerance {
		t.Errorf("step %d %s: differs from PyTorch by %.3g at %d (got %g, want %g)", step, what, diff, at,
			got[at], want[at])
	}
}

func constantSlice(n int, v float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// bnLayout moves PyTorch's channel axis (1) last and back, or leaves it.
type bnLayout struct {
	channelsLast bool
	rank, axis   int
}

func newBNLayout(shape []int, channelsLast bool) bnLayout {
	if channelsLast {
		return bnLayout{channelsLast: true, rank: len(shape), axis: -1}
	}
	return bnLayout{rank: len(shape), axis: 1}
}

func (l bnLayout) in(x *Node) *Node {
	if !l.channelsLast {
		return x
	}
	perm := []int{0}
	for i := 2; i < l.rank; i++ {
		perm = append(perm, i)
	}
	return TransposeAllAxes(x, append(perm, 1)...)
}

func (l bnLayout) out(x *Node) *Node {
	if !l.channelsLast {
		return x
	}
	perm := []int{0, l.rank - 1}
	for i := 1; i < l.rank-1; i++ {
		perm = append(perm, i)
	}
	return TransposeAllAxes(x, perm...)
}

// TestBatchNormLoweringHalfPrecision: in bfloat16 and float16 the lowering
// computes in float32 and rounds the results, so they stay within the
// half types' precision of the float32 results.
func TestBatchNormLoweringHalfPrecision(t *testing.T) {
	backend := Wrap(gobackend.GetBackend())
	c := bngolden.Load(t)[2] // bn2d
	step := c.Steps[0]
	for _, dtype := range []dtypes.DType{dtypes.BFloat16, dtypes.Float16} {
		outs := MustExecOnceN(backend, func(x, w, b, gy *Node) []*Node {
			x, w, b, gy = ConvertDType(x, dtype), ConvertDType(w, dtype), ConvertDType(b, dtype), ConvertDType(gy, dtype)
			y, mean, variance := InternalBatchNormForTraining(x, w, b, float32(c.Eps), 1)
			grads := Gradient(ReduceAllSum(Mul(y, gy)), x)
			return []*Node{ConvertDType(y, dtypes.Float32), ConvertDType(mean, dtypes.Float32),
				ConvertDType(variance, dtypes.Float32), ConvertDType(grads[0], dtypes.Float32)}
		}, tensors.FromFlatDataAndDimensions(step.X, c.Shape...), c.Weight, c.Bias,
			tensors.FromFlatDataAndDimensions(step.GradY, c.Shape...))
		tolerance := 0.05 // bfloat16 has 8 significant bits; the inputs themselves are rounded
		for j, want := range [][]float32{step.Y, step.BatchMean, step.BatchVar, step.GradX} {
			got := tensors.MustCopyFlatData[float32](outs[j])
			if diff, at := bngolden.MaxDiff(t, dtype.String(), got, want); diff > tolerance {
				t.Errorf("%s output %d: differs from float32 PyTorch by %.3g at %d", dtype, j, diff, at)
			}
		}
	}
}
