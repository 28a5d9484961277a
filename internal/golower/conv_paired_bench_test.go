package golower

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// BenchmarkConv2InputGradPaired times the CNN's second convolution's input
// gradient alone (GoMLX's form: the [64,11,11,64] output gradient padded
// 2 on each side, convolved with a [3,3,64,32] kernel to [64,13,13,32])
// under each lowering, alternating one call of each per iteration; it
// reports CPU time per call of each.
func BenchmarkConv2InputGradPaired(b *testing.B) {
	variants := []struct {
		name     string
		lowering Lowering
	}{
		{"gather", Lowering{NoScatterConvs: true}},
		{"scatter", Lowering{}},
	}
	type prepared struct {
		exec   *Exec
		dy, kk *tensors.Tensor
	}
	var runs []prepared
	for _, v := range variants {
		exec := MustNewExec(WrapWith(gobackend.GetBackend(), DefaultRules(), v.lowering), func(dy, k *Node) *Node {
			return ReduceAllSum(Convolve(dy, k).PaddingPerDim([][2]int{{2, 2}, {2, 2}}).Done())
		})
		defer exec.Finalize()
		rng := rand.New(rand.NewPCG(3, 4))
		r := prepared{exec: exec, dy: randomTensor(rng, []int{64, 11, 11, 64}), kk: randomTensor(rng, []int{3, 3, 64, 32})}
		exec.MustCall(r.dy, r.kk)
		runs = append(runs, r)
	}
	cpu := make([]time.Duration, len(runs))
	for b.Loop() {
		for i, r := range runs {
			c0 := processCPUTime(b)
			for _, out := range r.exec.MustCall(r.dy, r.kk) {
				out.FinalizeAll()
			}
			cpu[i] += processCPUTime(b) - c0
		}
	}
	for i, v := range variants {
		b.ReportMetric(float64(cpu[i].Nanoseconds())/float64(b.N), "cpu-ns/op-"+v.name)
	}
}
