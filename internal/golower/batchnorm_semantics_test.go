package golower

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/internal/bngolden"
)

// bnSemanticsCase is a seeded batch normalization problem: an operand of
// shape dims normalised over every axis but axis.
type bnSemanticsCase struct {
	dims []int
	axis int
}

func (c bnSemanticsCase) String() string { return fmt.Sprintf("%v_axis%d", c.dims, c.axis) }

func bnSemanticsCases() []bnSemanticsCase {
	return []bnSemanticsCase{{[]int{7, 3}, 1}, {[]int{7, 3}, 0}, {[]int{2, 5, 4, 3}, 3}, {[]int{2, 5, 4, 3}, 1},
		{[]int{3, 4, 6}, -1}, {[]int{1, 2, 2, 2, 5}, 4}}
}

// inputs draws the operand (per-feature offsets), scale, offset and output
// gradient of the case.
func (c bnSemanticsCase) inputs(seed uint64) (x, scale, offset, dy *tensors.Tensor) {
	rng := rand.New(rand.NewPCG(seed, 7))
	size := 1
	for _, d := range c.dims {
		size *= d
	}
	axis := c.axis
	if axis < 0 {
		axis += len(c.dims)
	}
	features := c.dims[axis]
	stride := 1
	for _, d := range c.dims[axis+1:] {
		stride *= d
	}
	xs, dys := make([]float32, size), make([]float32, size)
	for i := range xs {
		f := (i / stride) % features
		xs[i] = float32(rng.NormFloat64()*float64(f+1) + 2*float64(f))
		dys[i] = float32(rng.NormFloat64())
	}
	ss, os := make([]float32, features), make([]float32, features)
	for i := range ss {
		ss[i], os[i] = float32(rng.Float64()+0.5), float32(rng.NormFloat64())
	}
	return tensors.FromFlatDataAndDimensions(xs, c.dims...), tensors.FromValue(ss), tensors.FromValue(os),
		tensors.FromFlatDataAndDimensions(dys, c.dims...)
}

// directBatchNorm is XLA's definition of BatchNormTraining's normalized
// output written with plain graph ops (so GoMLX differentiates it by
// itself), and the batch's mean and biased variance.
func directBatchNorm(x, scale, offset *Node, epsilon float64, axis int) (y, mean, variance *Node) {
	axis = MustAdjustAxis(axis, x)
	var others []int
	for i := range x.Rank() {
		if i != axis {
			others = append(others, i)
		}
	}
	dims := make([]int, x.Rank())
	for i := range dims {
		dims[i] = 1
	}
	dims[axis] = x.Shape().Dimensions[axis]
	meanKept := ReduceAndKeep(x, ReduceMean, others...)
	centered := Sub(x, meanKept)
	varKept := ReduceAndKeep(Square(centered), ReduceMean, others...)
	y = Add(Mul(Div(centered, Sqrt(AddScalar(varKept, epsilon))), Reshape(scale, dims...)), Reshape(offset, dims...))
	return y, Reshape(meanKept, dims[axis]), Reshape(varKept, dims[axis])
}

// batchNormOutputs runs training forward (output, mean, variance), the
// gradients of sum(y·dy) with respect to x, scale and offset, and the
// inference op with the batch's statistics, through the backend's batch
// normalization ops (direct=false) or the plain-op definition.
func batchNormOutputs(t *testing.T, backend compute.Backend, c bnSemanticsCase, direct bool,
	x, scale, offset, dy *tensors.Tensor) [][]float32 {
	t.Helper()
	const epsilon = 1e-3
	exec, err := NewExec(backend, func(x, scale, offset, dy *Node) []*Node {
		var y, mean, variance *Node
		if direct {
			y, mean, variance = directBatchNorm(x, scale, offset, epsilon, c.axis)
		} else {
			y, mean, variance = InternalBatchNormForTraining(x, scale, offset, epsilon, c.axis)
		}
		grads := Gradient(ReduceAllSum(Mul(y, dy)), x, scale, offset)
		inference := InternalBatchNormForInference(x, scale, offset, StopGradient(mean), StopGradient(variance),
			epsilon, c.axis)
		return append([]*Node{y, mean, variance, inference}, grads...)
	})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := exec.Call(x, scale, offset, dy)
	if err != nil {
		t.Fatal(err)
	}
	flat := make([][]float32, len(outs))
	for i, o := range outs {
		flat[i] = tensors.MustCopyFlatData[float32](o)
	}
	return flat
}

// TestBatchNormLoweringMatchesItsDefinition: on seeded operands of ranks 2
// to 5, every feature axis position and batches down to one example, the
// lowered ops equal XLA's definition written with plain ops: the training
// output, mean and biased variance, the inference op given those, and
// BatchNormGradient against GoMLX's own autodiff of the definition, within
// 1e-5 (absolute up to 1, relative above). It runs with BatchNormGradient
// reusing the forward's centered operand (bnreuse.go), checking that it
// did, and without.
func TestBatchNormLoweringMatchesItsDefinition(t *testing.T) {
	for _, reuse := range []bool{true, false} {
		t.Run(fmt.Sprintf("reuse=%v", reuse), func(t *testing.T) {
			testBatchNormLoweringMatchesItsDefinition(t, reuse)
		})
	}
}

func testBatchNormLoweringMatchesItsDefinition(t *testing.T, reuse bool) {
	backend := WrapWith(gobackend.GetBackend(), DefaultRules(), Lowering{NoBatchNormReuse: !reuse}).(*Backend)
	names := []string{"y", "mean", "variance", "inference", "grad_x", "grad_scale", "grad_offset"}
	for i, c := range bnSemanticsCases() {
		t.Run(c.String(), func(t *testing.T) {
			x, scale, offset, dy := c.inputs(uint64(i))
			reused := backend.ReusedBatchNorms()
			lowered := batchNormOutputs(t, backend, c, false, x, scale, offset, dy)
			want := 0
			if reuse {
				want = 1
			}
			if got := backend.ReusedBatchNorms() - reused; got != int64(want) {
				t.Errorf("%d gradients reused the forward's centered operand, want %d", got, want)
			}
			wantOut := batchNormOutputs(t, backend, c, true, x, scale, offset, dy)
			wantOut[3] = wantOut[0] // inference with the batch's statistics is the training output
			for j := range lowered {
				if diff, at := bngolden.MaxDiff(t, names[j], lowered[j], wantOut[j]); diff > 1e-5 {
					t.Errorf("%s: lowered differs from the definition by %.3g at %d (%g vs %g)", names[j], diff, at,
						lowered[j][at], wantOut[j][at])
				}
			}
		})
	}
}
