package golower

import (
	"sync/atomic"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
)

// TestGraphStats: what the wrapper counts while a graph is built, which
// engine's per-graph scheduler reads: a convolution even when the rules
// leave it to the backend, and each matrix product with its
// multiply-adds (a 128×128 by 128×128 product 2M, an 8×8 one 512, a
// FusedDense of [256, 128] by [128, 64] 2M).
func TestGraphStats(t *testing.T) {
	for _, tc := range []struct {
		name  string
		graph string
		rules Rules
		want  GraphStats
	}{
		{"no convolution", "tanh", DefaultRules(), GraphStats{}},
		{"a lowered convolution", "conv", DefaultRules(), GraphStats{HasConvolution: true}},
		{"a convolution left to the backend", "conv", Rules{Disabled: true}, GraphStats{HasConvolution: true}},
		{"large products", "large", DefaultRules(), GraphStats{Matmuls: 1, MatmulMACs: 128 * 128 * 128}},
		{"small products", "small", DefaultRules(), GraphStats{Matmuls: 1, MatmulMACs: 8 * 8 * 8}},
		{"a fused dense layer", "dense", DefaultRules(), GraphStats{Matmuls: 1, MatmulMACs: 256 * 128 * 64}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newGoBackend(t, tc.rules)
			var got GraphStats
			b.SetRunCounter(func(graph GraphStats) *atomic.Int32 { got = graph; return nil })
			compileSmallGraph(t, b, tc.graph)
			if got.HasConvolution != tc.want.HasConvolution {
				t.Errorf("HasConvolution %v, want %v", got.HasConvolution, tc.want.HasConvolution)
			}
			if !tc.want.HasConvolution && got != tc.want {
				// A lowered convolution's own products are not pinned here.
				t.Errorf("stats %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestRunCounterRaisedWhileRunning: the counter a RunCounter chooses is
// raised by one while each run of the graph is in flight and lowered
// after it; with none set, or when it chooses nil, nothing is raised.
func TestRunCounterRaisedWhileRunning(t *testing.T) {
	for _, tc := range []struct {
		name   string
		set    bool
		choose bool
		raised bool
	}{
		{"chosen", true, true, true},
		{"chosen nil", true, false, false},
		{"none set", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newGoBackend(t, DefaultRules())
			var counter atomic.Int32
			if tc.set {
				b.SetRunCounter(func(GraphStats) *atomic.Int32 {
					if tc.choose {
						return &counter
					}
					return nil
				})
			}
			exec := compileSmallGraph(t, b, "tanh")
			seen := &countingExecutable{Executable: exec.Executable, live: &counter}
			exec.Executable = seen
			input, err := b.BufferFromFlatData(0, make([]float32, 2*5*5*3), shapes.Make(dtypes.Float32, 2, 5, 5, 3))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := exec.Execute([]compute.Buffer{input}, nil, 0); err != nil {
				t.Fatal(err)
			}
			if raised := seen.during == 1; raised != tc.raised || seen.during > 1 {
				t.Errorf("counter %d while running, want raised %v", seen.during, tc.raised)
			}
			if n := counter.Load(); n != 0 {
				t.Errorf("counter %d after the run", n)
			}
		})
	}
}

// newGoBackend wraps a Go backend of its own, finalized when t ends.
func newGoBackend(t *testing.T, rules Rules) *Backend {
	t.Helper()
	inner, err := compute.NewWithConfig("go")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(inner.Finalize)
	return WrapWith(inner, rules, Lowering{}).(*Backend)
}

// compileSmallGraph compiles on b, for x [2, 5, 5, 3]: tanh(x) ("tanh");
// a 3×3 convolution of it by a constant kernel ("conv"); or tanh(x) and a
// product of two constant matrices of 128×128 (2M multiply-adds, "large")
// or 8×8 ("small"), or a FusedDense of a constant [256, 128] by [128, 64]
// (2M multiply-adds, "dense").
func compileSmallGraph(t *testing.T, b *Backend, graph string) *executable {
	t.Helper()
	bld := b.Builder("small")
	f := bld.Main()
	x, err := f.Parameter("x", shapes.Make(dtypes.Float32, 2, 5, 5, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	y, err := f.Tanh(x)
	if err != nil {
		t.Fatal(err)
	}
	outputs := []compute.Value{y}
	switch graph {
	case "conv":
		kernel, err := f.Constant(make([]float32, 3*3*3*4), 3, 3, 3, 4)
		if err != nil {
			t.Fatal(err)
		}
		axes := compute.ConvolveAxesConfig{InputBatch: 0, InputChannels: 3, InputSpatial: []int{1, 2},
			KernelInputChannels: 2, KernelOutputChannels: 3, KernelSpatial: []int{0, 1},
			OutputBatch: 0, OutputChannels: 3, OutputSpatial: []int{1, 2}}
		if outputs[0], err = f.ConvGeneral(y, kernel, axes, nil, nil, nil, nil, 1, 1); err != nil {
			t.Fatal(err)
		}
	case "large", "small":
		n := map[string]int{"large": 128, "small": 8}[graph]
		m, err := f.Constant(make([]float32, n*n), n, n)
		if err != nil {
			t.Fatal(err)
		}
		product, err := f.DotGeneral(m, []int{1}, nil, m, []int{0}, nil, compute.DotGeneralConfig{})
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, product)
	case "dense":
		in, err := f.Constant(make([]float32, 256*128), 256, 128)
		if err != nil {
			t.Fatal(err)
		}
		weight, err := f.Constant(make([]float32, 128*64), 128, 64)
		if err != nil {
			t.Fatal(err)
		}
		dense, err := f.FusedDense(in, weight, nil, compute.DenseConfig{})
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, dense)
	}
	if err := f.Return(outputs, nil); err != nil {
		t.Fatal(err)
	}
	exec, err := bld.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return exec.(*executable)
}

// countingExecutable records the value of a counter while it ran.
type countingExecutable struct {
	compute.Executable
	live   *atomic.Int32
	during int32
}

func (c *countingExecutable) Execute(inputs []compute.Buffer, donate []bool, device compute.DeviceNum) ([]compute.Buffer, error) {
	c.during = c.live.Load()
	return c.Executable.Execute(inputs, donate, device)
}
