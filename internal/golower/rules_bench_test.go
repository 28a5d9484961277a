package golower

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
)

// ruleShapes are convolutions from tiny to CNN-sized, to find where the
// lowering starts to beat the direct loop (the Rules' MinMultiplyAdds).
var ruleShapes = []convCase{
	{batch: 1, size: 6, inChannels: 1, outChannels: 1, kernel: 3, stride: 1, dilation: 1, groups: 1},
	{batch: 1, size: 8, inChannels: 2, outChannels: 2, kernel: 3, stride: 1, dilation: 1, groups: 1},
	{batch: 1, size: 8, inChannels: 4, outChannels: 4, kernel: 3, stride: 1, dilation: 1, groups: 1},
	{batch: 1, size: 12, inChannels: 4, outChannels: 8, kernel: 3, stride: 1, dilation: 1, groups: 1},
	{batch: 1, size: 16, inChannels: 8, outChannels: 8, kernel: 3, stride: 1, dilation: 1, groups: 1},
	{batch: 1, size: 28, inChannels: 1, outChannels: 32, kernel: 3, stride: 1, dilation: 1, groups: 1},
	{batch: 4, size: 16, inChannels: 16, outChannels: 16, kernel: 3, stride: 1, dilation: 1, groups: 1},
	{batch: 1, size: 32, inChannels: 16, outChannels: 16, kernel: 1, stride: 1, dilation: 1, groups: 1},
	{batch: 1, size: 16, inChannels: 8, outChannels: 8, kernel: 7, stride: 2, dilation: 1, groups: 1},
	{batch: 64, size: 13, inChannels: 32, outChannels: 64, kernel: 3, stride: 1, dilation: 1, groups: 1},
	// Depthwise and grouped: one small matmul per group.
	{batch: 8, size: 16, inChannels: 32, outChannels: 32, kernel: 3, stride: 1, dilation: 1, groups: 32},
	{batch: 8, size: 16, inChannels: 32, outChannels: 32, kernel: 3, stride: 1, dilation: 1, groups: 16},
	{batch: 8, size: 16, inChannels: 32, outChannels: 32, kernel: 3, stride: 1, dilation: 1, groups: 8},
	{batch: 8, size: 16, inChannels: 32, outChannels: 32, kernel: 3, stride: 1, dilation: 1, groups: 4},
	// Dilated: the kernel positions go into the gather's indices.
	{batch: 8, size: 16, inChannels: 8, outChannels: 8, kernel: 3, stride: 1, dilation: 2, groups: 1},
}

// BenchmarkConvRules times the forward convolution and both gradients of
// each shape on the direct and the lowered backend, reporting the forward
// convolution's multiply-adds, to set Rules.MinMultiplyAdds.
func BenchmarkConvRules(b *testing.B) {
	for _, c := range ruleShapes {
		inDims, kDims := c.shapes()
		macs := 0
		for _, bc := range []struct {
			name    string
			backend compute.Backend
		}{
			{"direct", gobackend.GetBackend()},
			{"lowered", WrapWith(gobackend.GetBackend(), Rules{KeepPooling: true}, Lowering{})},
		} {
			b.Run(fmt.Sprintf("%s/%s", c, bc.name), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 2))
				x, kernel := randomTensor(rng, inDims), randomTensor(rng, kDims)
				exec := MustNewExec(bc.backend, func(x, kernel *Node) []*Node {
					y := c.convolve(x, kernel)
					grads := Gradient(ReduceAllSum(y), x, kernel)
					return []*Node{ReduceAllSum(y), ReduceAllSum(grads[0]), ReduceAllSum(grads[1])}
				})
				defer exec.Finalize()
				if macs == 0 {
					y := MustExecOnce(gobackend.GetBackend(), func(x, kernel *Node) *Node { return c.convolve(x, kernel) },
						clone(b, x), clone(b, kernel))
					macs = y.Shape().Size() * c.kernel * c.kernel * c.inChannels / c.groups
				}
				exec.MustCall(x, kernel)
				cpuBefore := processCPUTime(b)
				for b.Loop() {
					for _, out := range exec.MustCall(x, kernel) {
						out.FinalizeAll()
					}
				}
				b.ReportMetric(float64((processCPUTime(b)-cpuBefore).Nanoseconds())/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(macs), "MACs")
			})
		}
	}
}
