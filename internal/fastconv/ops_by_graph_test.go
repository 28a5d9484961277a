package fastconv

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
)

// TestGoBackendCountsLiveExecutions: the Go backend this module pins keeps
// its count of executions in flight where ChooseOpsModePerGraph
// looks for it. A GoMLX upgrade that renames or retypes it fails here (and
// "go:ops_by_graph" then refuses to start, rather than silently running
// every graph one way).
func TestGoBackendCountsLiveExecutions(t *testing.T) {
	inner, err := compute.NewWithConfig("go")
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Finalize()
	live := liveExecutionsOf(inner)
	if live == nil {
		t.Fatal("the Go backend has no NumLiveExecutions counter")
	}
	if n := live.Load(); n != 0 {
		t.Errorf("%d executions in flight on an idle backend", n)
	}
	if err := WrapWith(inner, DefaultRules(), Lowering{}).(*Backend).ChooseOpsModePerGraph(); err != nil {
		t.Error(err)
	}
	other := WrapWith(noCounter{inner}, DefaultRules(), Lowering{}).(*Backend)
	if err := other.ChooseOpsModePerGraph(); err == nil {
		t.Error("a backend without the counter was accepted")
	}
	if other.oneOpAtATime.Load() != nil {
		t.Error("a refused backend was changed")
	}
}

// noCounter is a backend whose struct has no NumLiveExecutions.
type noCounter struct{ compute.Backend }

// TestOneOpAtATimeWithoutConvolutions: with the per-graph choice on, a
// graph raises the count while it runs unless it has a convolution (even
// one the rules do not lower) or, with more than one core, matrix
// products of MinSideBySideMatmulMACs on average; with the choice off,
// nothing is raised.
func TestOneOpAtATimeWithoutConvolutions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		byGraph bool
		graph   string
		procs   int
		rules   Rules
		raised  bool
	}{
		{"by graph, no convolution", true, "tanh", 2, DefaultRules(), true},
		{"by graph, a lowered convolution", true, "conv", 2, DefaultRules(), false},
		{"by graph, a lowered convolution, one core", true, "conv", 1, DefaultRules(), false},
		{"by graph, a convolution left to the backend", true, "conv", 2, Rules{Disabled: true}, false},
		{"by graph, large products", true, "large", 2, DefaultRules(), false},
		{"by graph, large products, one core", true, "large", 1, DefaultRules(), true},
		{"by graph, small products", true, "small", 2, DefaultRules(), true},
		{"by graph, a large fused dense layer", true, "dense", 2, DefaultRules(), false},
		{"as configured, no convolution", false, "tanh", 2, DefaultRules(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(tc.procs))
			inner, err := compute.NewWithConfig("go")
			if err != nil {
				t.Fatal(err)
			}
			defer inner.Finalize()
			b := WrapWith(inner, tc.rules, Lowering{}).(*Backend)
			if tc.byGraph {
				if err := b.ChooseOpsModePerGraph(); err != nil {
					t.Fatal(err)
				}
			}
			exec := compileSmallGraph(t, b, tc.graph)
			live := liveExecutionsOf(inner)
			seen := &countingExecutable{Executable: exec.Executable, live: live}
			exec.Executable = seen
			input, err := b.BufferFromFlatData(0, make([]float32, 2*5*5*3), shapes.Make(dtypes.Float32, 2, 5, 5, 3))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := exec.Execute([]compute.Buffer{input}, nil, 0); err != nil {
				t.Fatal(err)
			}
			if raised := seen.during > 0; raised != tc.raised {
				t.Errorf("count raised %v (%d in flight beside this one), want %v", raised, seen.during, tc.raised)
			}
			if n := live.Load(); n != 0 {
				t.Errorf("%d executions in flight after the run", n)
			}
		})
	}
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

// countingExecutable records how many other executions the backend's
// count showed while it ran (the backend's own Execute adds this one).
type countingExecutable struct {
	compute.Executable
	live   *atomic.Int32
	during int32
}

func (c *countingExecutable) Execute(inputs []compute.Buffer, donate []bool, device compute.DeviceNum) ([]compute.Buffer, error) {
	c.during = c.live.Load()
	return c.Executable.Execute(inputs, donate, device)
}
