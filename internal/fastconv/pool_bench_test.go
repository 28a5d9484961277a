package fastconv

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
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
