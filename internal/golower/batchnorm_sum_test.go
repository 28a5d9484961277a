package golower

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// TestBatchNormStagedSumAccuracy: the batch mean and the offset gradient
// (Σdy) of float32 operands with many values per feature (channels last and
// first, and a prime batch that splitRun cannot split, which sums in float64)
// equal float64 sums of the same values within 2e-7 relative. The sums of
// these shapes in one float32 run differ by more (the test logs that error
// for comparison), so a lowering that dropped the staged sums or the
// float64 fallback would fail here.
func TestBatchNormStagedSumAccuracy(t *testing.T) {
	backend := Wrap(gobackend.GetBackend())
	for _, c := range []struct {
		name string
		dims []int
		axis int
	}{
		{"nhwc", []int{64, 28, 28, 4}, 3},
		{"nchw", []int{64, 4, 28, 28}, 1},
		{"1d_long_batch", []int{1 << 16, 3}, 1},
		{"1d_prime_batch", []int{65521, 2}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			size, features := 1, c.dims[c.axis]
			for _, d := range c.dims {
				size *= d
			}
			x := make([]float32, size)
			for i := range x {
				x[i] = 1 + rng.Float32() // all positive, so the running sum is large
			}
			exec := MustNewExec(backend, func(x *Node) []*Node {
				perFeature := shapes.Make(dtypes.Float32, x.Shape().Dim(c.axis))
				scale, offset := Ones(x.Graph(), perFeature), Zeros(x.Graph(), perFeature)
				y, mean, _ := InternalBatchNormForTraining(x, scale, offset, 1e-5, c.axis)
				grads := Gradient(ReduceAllSum(Mul(y, x)), offset) // Σdy with dy = x
				return []*Node{mean, grads[0], ReduceSum(x, axesBut(x.Rank(), c.axis)...)}
			})
			outs := exec.MustCall(tensors.FromFlatDataAndDimensions(x, c.dims...))
			mean, gradOffset := tensors.MustCopyFlatData[float32](outs[0]), tensors.MustCopyFlatData[float32](outs[1])
			plain := tensors.MustCopyFlatData[float32](outs[2])
			want := make([]float64, features)
			inner := 1
			for _, d := range c.dims[c.axis+1:] {
				inner *= d
			}
			for i, v := range x {
				want[(i/inner)%features] += float64(v)
			}
			n := float64(size / features)
			var worstPlain float64
			for f, w := range want {
				if r := math.Abs(float64(mean[f])-w/n) / (w / n); r > 2e-7 {
					t.Errorf("feature %d: mean %.9g, float64 %.9g (relative %.3g)", f, mean[f], w/n, r)
				}
				if r := math.Abs(float64(gradOffset[f])-w) / w; r > 2e-7 {
					t.Errorf("feature %d: Σdy %.9g, float64 %.9g (relative %.3g)", f, gradOffset[f], w, r)
				}
				worstPlain = max(worstPlain, math.Abs(float64(plain[f])-w)/w)
			}
			t.Logf("one float32 ReduceSum of the same values: largest relative error %.3g", worstPlain)
		})
	}
}

// axesBut is every axis of a rank-rank operand but axis.
func axesBut(rank, axis int) []int {
	var axes []int
	for a := range rank {
		if a != axis {
			axes = append(axes, a)
		}
	}
	return axes
}
