package golower

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// BenchmarkPoolRules times 2×2 max-pooling and its gradient, direct and
// lowered, from tiny to the CNN's first pooling, to check whether
// pooling needs a size rule like convolutions.
func BenchmarkPoolRules(b *testing.B) {
	for _, dims := range [][]int{{1, 4, 4, 1}, {1, 8, 8, 4}, {8, 16, 16, 8}, {64, 26, 26, 32}} {
		for _, bc := range []struct {
			name    string
			backend compute.Backend
		}{
			{"direct", gobackend.GetBackend()},
			{"lowered", WrapWith(gobackend.GetBackend(), Rules{}, Lowering{})},
		} {
			b.Run(fmt.Sprintf("%v/%s", dims, bc.name), func(b *testing.B) {
				x := randomTensor(rand.New(rand.NewPCG(7, 8)), dims)
				exec := MustNewExec(bc.backend, func(x *Node) []*Node {
					y := MaxPool(x).Window(2).Done()
					return []*Node{ReduceAllSum(y), ReduceAllSum(Gradient(ReduceAllSum(Mul(y, y)), x)[0])}
				})
				defer exec.Finalize()
				exec.MustCall(x)
				cpuBefore := processCPUTime(b)
				for b.Loop() {
					for _, out := range exec.MustCall(x) {
						out.FinalizeAll()
					}
				}
				b.ReportMetric(float64((processCPUTime(b)-cpuBefore).Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkPoolPaired times the CNN's two 2×2 max-poolings ([64,26,26,32]
// and [64,11,11,64]) with their gradients under each pooling lowering,
// alternating one call of each per iteration; it reports CPU time per
// call of each.
func BenchmarkPoolPaired(b *testing.B) {
	variants := []struct {
		name     string
		lowering Lowering
	}{
		{"whole", Lowering{WholeWindowPooling: true}},
		{"axes-argminmax", Lowering{PoolArgMinMax: true}},
		{"axes-pairs", Lowering{}},
	}
	for _, dims := range [][]int{{64, 26, 26, 32}, {64, 11, 11, 64}} {
		b.Run(fmt.Sprint(dims), func(b *testing.B) {
			type prepared struct {
				exec *Exec
				x    *tensors.Tensor
			}
			var runs []prepared
			for _, v := range variants {
				exec := MustNewExec(WrapWith(gobackend.GetBackend(), Rules{}, v.lowering), func(x *Node) []*Node {
					y := MaxPool(x).Window(2).Done()
					return []*Node{ReduceAllSum(y), ReduceAllSum(Gradient(ReduceAllSum(Mul(y, y)), x)[0])}
				})
				defer exec.Finalize()
				x := randomTensor(rand.New(rand.NewPCG(7, 8)), dims)
				exec.MustCall(x)
				runs = append(runs, prepared{exec, x})
			}
			cpu := make([]time.Duration, len(runs))
			for b.Loop() {
				for i, r := range runs {
					c0 := processCPUTime(b)
					for _, out := range r.exec.MustCall(r.x) {
						out.FinalizeAll()
					}
					cpu[i] += processCPUTime(b) - c0
				}
			}
			for i, v := range variants {
				b.ReportMetric(float64(cpu[i].Nanoseconds())/float64(b.N), "cpu-ns/op-"+v.name)
			}
		})
	}
}
