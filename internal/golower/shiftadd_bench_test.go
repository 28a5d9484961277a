package golower

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
)

// BenchmarkShiftAddAlternatives times, in alternation, three ways to
// compute examples/resnet's first-block 3×3 convolution (batch 64, 16 to
// 16 channels) on the padded, channels-first, flattened input x [C, T]
// (shift.go's layout), CPU milliseconds per call:
//
//   - gather: shift.go's patches [9, C, N·P] (one Gather of 144 runs) and
//     one matmul by the kernel [Co, 9·C];
//   - shiftgather: no patches: one matmul by the kernel as [9·Co, C],
//     z = [9, Co, T], then one Gather of the nine shifted runs
//     [9, Co, N·P] and a ReduceSum over the kernel positions;
//   - shiftadd: the same matmul, then nine Slices of z added.
//
// Measured with -cpu 1 -benchtime 30x -count 3 on the loaded 2-core
// machine: gather 6.5–7.2, shiftgather 7.3–8.5 (1.10–1.18×), shiftadd
// 23.7–25.0 (3.5×; the Go backend's Slice copies element by element). The
// patches cost as many bytes as z: a patch-free form moves z's bytes
// again, so the gather stays.
func BenchmarkShiftAddAlternatives(b *testing.B) {
	const n, hp, wp, c, co = 64, 30, 30, 16, 16
	grid := n * hp * wp
	total := grid + hp*wp
	offsets := []int{}
	for i := range 3 {
		for j := range 3 {
			offsets = append(offsets, i*wp+j)
		}
	}
	backend := gobackend.GetBackend()
	rng := rand.New(rand.NewPCG(1, 2))
	x := randomTensor(rng, []int{c, total})
	w := randomTensor(rng, []int{co, 9, c})
	gather := func(x, w *Node) *Node {
		idx := make([]int32, 9)
		for i, o := range offsets {
			idx[i] = int32(o)
		}
		start := Const(x.Graph(), idx)
		start = Reshape(start, 9, 1)
		p := BackendGather(x, start, 1, []int{1, 2}, nil, []int{1}, []int{c, grid}, true)
		return DotGeneral(w, []int{1, 2}, nil, p, []int{0, 1}, nil)
	}
	shiftAdd := func(x, w *Node) *Node {
		wt := Reshape(TransposeAllDims(w, 1, 0, 2), 9*co, c) // [k, co] rows
		z := DotGeneral(wt, []int{1}, nil, x, []int{0}, nil) // [9·Co, T]
		z = Reshape(z, 9, co, total)
		var y *Node
		for k, o := range offsets {
			s := Reshape(Slice(z, AxisRange(k, k+1), AxisRange(), AxisRange(o, o+grid)), co, grid)
			if y == nil {
				y = s
			} else {
				y = Add(y, s)
			}
		}
		return y
	}
	shiftGather := func(x, w *Node) *Node {
		wt := Reshape(TransposeAllDims(w, 1, 0, 2), 9*co, c)
		z := Reshape(DotGeneral(wt, []int{1}, nil, x, []int{0}, nil), 9, co, total)
		idx := make([]int32, 0, 18)
		for k, o := range offsets {
			idx = append(idx, int32(k), int32(o))
		}
		start := Reshape(Const(x.Graph(), idx), 9, 2)
		g := BackendGather(z, start, 1, []int{1, 2}, []int{0}, []int{0, 2}, []int{1, co, grid}, true)
		return ReduceSum(g, 0)
	}
	variants := []struct {
		name string
		fn   func(x, w *Node) *Node
	}{{"gather", gather}, {"shiftgather", shiftGather}, {"shiftadd", shiftAdd}}
	var execs []*Exec
	for _, v := range variants {
		exec, err := NewExec(backend, v.fn)
		if err != nil {
			b.Fatal(err)
		}
		execs = append(execs, exec)
	}
	cpu := make([]float64, len(execs))
	var want []float32
	for i, e := range execs {
		out, err := e.Call(x, w)
		if err != nil {
			b.Fatal(err)
		}
		got := out[0].Value().([][]float32)
		flat := got[3][1000:1010]
		if i == 0 {
			want = append(want, flat...)
		} else {
			for j := range want {
				if d := want[j] - flat[j]; d > 1e-3 || d < -1e-3 {
					b.Fatalf("%s differs: %v vs %v", variants[i].name, flat, want)
				}
			}
		}
	}
	for b.Loop() {
		for i, e := range execs {
			start := processCPUTime(b)
			out, err := e.Call(x, w)
			if err != nil {
				b.Fatal(err)
			}
			out[0].FinalizeAll()
			cpu[i] += float64(processCPUTime(b) - start)
		}
	}
	for i, v := range variants {
		b.ReportMetric(cpu[i]/1e6/float64(b.N), v.name+"-cpu-ms")
	}
}
