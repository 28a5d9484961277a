package gokernels

import (
	"testing"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
)

// benchOps are ops of the zoo's steps at their sizes: the ResNet's
// channels-last ↔ channels-first moves at 28×28×16 (batch 64), a
// convolution's padding, the LSTM's per-step slice (batch 32, 32 steps of
// 32 features), and the CNN's first max-pooling and its gradient.
var benchOps = []opCase{
	{name: "transpose_NHWC_to_CNHW", dims: []int{64 * 28 * 28, 16},
		build: func(fn compute.Function, x compute.Value) (compute.Value, error) { return fn.Transpose(x, 1, 0) }},
	{name: "transpose_batched_0213", dims: []int{64, 784, 16},
		build: func(fn compute.Function, x compute.Value) (compute.Value, error) { return fn.Transpose(x, 0, 2, 1) }},
	{name: "pad_28x28x16", dims: []int{64, 28, 28, 16},
		build: func(fn compute.Function, x compute.Value) (compute.Value, error) {
			zero, err := fn.Constant([]float32{0})
			if err != nil {
				return nil, err
			}
			return fn.Pad(x, zero, compute.PadAxis{}, compute.PadAxis{Start: 1, End: 1}, compute.PadAxis{Start: 1, End: 1}, compute.PadAxis{})
		}},
	{name: "slice_lstm_step", dims: []int{32, 32, 128},
		build: func(fn compute.Function, x compute.Value) (compute.Value, error) {
			return fn.Slice(x, []int{0, 7, 0}, []int{32, 8, 128}, []int{1, 1, 1})
		}},
	{name: "maxpool_26x26x32", dims: []int{64, 26, 26, 32},
		build: func(fn compute.Function, x compute.Value) (compute.Value, error) {
			return fn.ReduceWindow(x, compute.ReduceOpMax, []int{1, 2, 2, 1}, []int{1, 2, 2, 1}, nil, nil, nil)
		}},
	{name: "maxpool_grad_26x26x32", dims: []int{64, 26, 26, 32},
		build: func(fn compute.Function, x compute.Value) (compute.Value, error) {
			src, err := fn.Constant(make([]float32, 64*13*13*32), 64, 13, 13, 32)
			if err != nil {
				return nil, err
			}
			return fn.SelectAndScatterMax(x, src, []int{1, 2, 2, 1}, []int{1, 2, 2, 1}, nil)
		}},
}

// BenchmarkKernelsVsBackend times each of benchOps with the kernels on
// and off, alternating one execution of each per iteration, and reports
// both times and the kernels' ratio (below 1: faster).
//
//	GOEXPERIMENT=simd go test ./internal/gokernels -run '^$' -bench KernelsVsBackend -benchtime 200x -cpu 1
func BenchmarkKernelsVsBackend(b *testing.B) {
	if err := Installed(); err != nil {
		b.Skipf("kernels not installed: %v", err)
	}
	backend, err := gobackend.New("")
	if err != nil {
		b.Fatal(err)
	}
	defer backend.Finalize()
	for _, c := range benchOps {
		b.Run(c.name, func(b *testing.B) {
			// One executable per setting: the backend remembers per node
			// which executor ran it, so a node that fell back once stays
			// with the backend's.
			shape := shapes.Make(dtypes.Float32, c.dims...)
			in, err := backend.BufferFromFlatData(0, make([]float32, shape.Size()), shape)
			if err != nil {
				b.Fatal(err)
			}
			defer SetEnabled(SetEnabled(true))
			var execs [2]compute.Executable // kernels on, off
			for i := range execs {
				if execs[i], err = compileOp(backend, c); err != nil {
					b.Fatal(err)
				}
				defer execs[i].Finalize()
			}
			var took [2]time.Duration
			for b.Loop() {
				for i, exec := range execs {
					SetEnabled(i == 0)
					start := time.Now()
					outs, err := exec.Execute([]compute.Buffer{in}, nil, 0)
					if err != nil {
						b.Fatal(err)
					}
					took[i] += time.Since(start)
					outs[0].Finalize()
				}
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(took[0].Nanoseconds())/float64(b.N), "ns-kernels")
			b.ReportMetric(float64(took[1].Nanoseconds())/float64(b.N), "ns-backend")
			b.ReportMetric(float64(took[0])/float64(took[1]), "kernels/backend")
		})
	}
}

// compileOp compiles c's op on backend.
func compileOp(backend compute.Backend, c opCase) (compute.Executable, error) {
	bld := backend.Builder(c.name)
	fn := bld.Main()
	x, err := fn.Parameter("x", shapes.Make(dtypes.Float32, c.dims...), nil)
	if err != nil {
		return nil, err
	}
	y, err := c.build(fn, x)
	if err != nil {
		return nil, err
	}
	if err := fn.Return([]compute.Value{y}, nil); err != nil {
		return nil, err
	}
	return bld.Compile()
}
