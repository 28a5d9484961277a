package golower

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
)

// resnetConvs are the convolutions of examples/resnet's network
// (examples/internal/digits.ResNet) on its batches of 64: the stem, then
// per residual block the two 3×3 convolutions and, where the width
// doubles, the strided 1×1 shortcut.
var resnetConvs = []convCase{
	{batch: 64, size: 28, inChannels: 1, outChannels: 16, kernel: 3, stride: 1, dilation: 1, groups: 1, padSame: true},
	{batch: 64, size: 28, inChannels: 16, outChannels: 16, kernel: 3, stride: 1, dilation: 1, groups: 1, padSame: true},
	{batch: 64, size: 28, inChannels: 16, outChannels: 16, kernel: 3, stride: 1, dilation: 1, groups: 1, padSame: true},
	{batch: 64, size: 28, inChannels: 16, outChannels: 32, kernel: 3, stride: 2, dilation: 1, groups: 1, padSame: true},
	{batch: 64, size: 28, inChannels: 16, outChannels: 32, kernel: 1, stride: 2, dilation: 1, groups: 1, padSame: true},
	{batch: 64, size: 14, inChannels: 32, outChannels: 32, kernel: 3, stride: 1, dilation: 1, groups: 1, padSame: true},
	{batch: 64, size: 14, inChannels: 32, outChannels: 64, kernel: 3, stride: 2, dilation: 1, groups: 1, padSame: true},
	{batch: 64, size: 14, inChannels: 32, outChannels: 64, kernel: 1, stride: 2, dilation: 1, groups: 1, padSame: true},
	{batch: 64, size: 7, inChannels: 64, outChannels: 64, kernel: 3, stride: 1, dilation: 1, groups: 1, padSame: true},
}

// resnetLowerings are the lowerings BenchmarkResNetConvs compares, the
// earlier one first.
var resnetLowerings = []struct {
	name     string
	lowering Lowering
}{
	{"before=whole", Lowering{ShiftTileBytes: -1}},
	{"after=tiles", Lowering{}},
}

// BenchmarkResNetConvs times the forward pass and both gradients of all
// of examples/resnet's convolutions (one executable; the stem's input
// gradient is not taken, as in the network) per lowering. Each iteration
// runs every lowering in turn, so that they see the same machine; it
// reports each one's wall and CPU milliseconds and the ratios of the last
// lowering's to the first's.
func BenchmarkResNetConvs(b *testing.B) {
	type prepared struct {
		exec   *Exec
		inputs []any
	}
	var runs []prepared
	for _, variant := range resnetLowerings {
		backend := WrapWith(gobackend.GetBackend(), Rules{KeepPooling: true}, variant.lowering)
		rng := rand.New(rand.NewPCG(1, 2))
		var inputs []any
		for _, c := range resnetConvs {
			inDims, kDims := c.shapes()
			inputs = append(inputs, randomTensor(rng, inDims), randomTensor(rng, kDims))
		}
		exec, err := NewExec(backend, func(params []*Node) []*Node {
			var outs []*Node
			for i, c := range resnetConvs {
				x, kernel := params[2*i], params[2*i+1]
				y := c.convolve(x, kernel)
				wrt := []*Node{x, kernel}
				if i == 0 {
					wrt = wrt[1:]
				}
				grads := Gradient(ReduceAllSum(Mul(y, y)), wrt...)
				outs = append(outs, ReduceAllSum(y))
				for _, g := range grads {
					outs = append(outs, ReduceAllSum(g))
				}
			}
			return outs
		})
		if err != nil {
			b.Fatal(err)
		}
		defer exec.Finalize()
		runs = append(runs, prepared{exec, inputs})
	}
	call := func(b *testing.B, r prepared) {
		outs, err := r.exec.Call(r.inputs...)
		if err != nil {
			b.Fatal(err)
		}
		for _, out := range outs {
			out.FinalizeAll()
		}
	}
	for _, r := range runs {
		call(b, r) // compiles
	}
	wall := make([]time.Duration, len(runs))
	cpu := make([]time.Duration, len(runs))
	for b.Loop() {
		for i, r := range runs {
			start, cpuStart := time.Now(), processCPUTime(b)
			call(b, r)
			wall[i] += time.Since(start)
			cpu[i] += processCPUTime(b) - cpuStart
		}
	}
	for i, variant := range resnetLowerings {
		name, _, _ := strings.Cut(variant.name, "=")
		b.ReportMetric(float64(wall[i].Milliseconds())/float64(b.N), name+"-ms/op")
		b.ReportMetric(float64(cpu[i].Milliseconds())/float64(b.N), name+"-cpu-ms/op")
	}
	last := len(runs) - 1
	b.ReportMetric(float64(wall[last])/float64(wall[0]), "after/before")
	b.ReportMetric(float64(cpu[last])/float64(cpu[0]), "after/before-cpu")
}
