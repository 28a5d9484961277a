package fastconv

import (
	"sync/atomic"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
)

// TestGoBackendCountsLiveExecutions: the Go backend this module pins keeps
// its count of executions in flight where SideBySideOnlyWithConvolutions
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
	if err := WrapWith(inner, DefaultRules(), Lowering{}).(*Backend).SideBySideOnlyWithConvolutions(); err != nil {
		t.Error(err)
	}
	other := WrapWith(noCounter{inner}, DefaultRules(), Lowering{}).(*Backend)
	if err := other.SideBySideOnlyWithConvolutions(); err == nil {
		t.Error("a backend without the counter was accepted")
	}
	if other.oneOpAtATime.Load() != nil {
		t.Error("a refused backend was changed")
	}
}

// noCounter is a backend whose struct has no NumLiveExecutions.
type noCounter struct{ compute.Backend }

// TestOneOpAtATimeWithoutConvolutions: with the per-graph choice on, a
// graph without a convolution raises the count while it runs and one with
// a convolution (even one the rules do not lower) does not; with it off,
// neither does.
func TestOneOpAtATimeWithoutConvolutions(t *testing.T) {
	for _, tc := range []struct {
		name        string
		byGraph     bool
		convolution bool
		rules       Rules
		raised      bool
	}{
		{"by graph, no convolution", true, false, DefaultRules(), true},
		{"by graph, a lowered convolution", true, true, DefaultRules(), false},
		{"by graph, a convolution left to the backend", true, true, Rules{Disabled: true}, false},
		{"as configured, no convolution", false, false, DefaultRules(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner, err := compute.NewWithConfig("go")
			if err != nil {
				t.Fatal(err)
			}
			defer inner.Finalize()
			b := WrapWith(inner, tc.rules, Lowering{}).(*Backend)
			if tc.byGraph {
				if err := b.SideBySideOnlyWithConvolutions(); err != nil {
					t.Fatal(err)
				}
			}
			exec := compileSmallGraph(t, b, tc.convolution)
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

// compileSmallGraph compiles tanh(x), or a 3×3 convolution of x
// [2, 5, 5, 3] by a constant kernel, on b.
func compileSmallGraph(t *testing.T, b *Backend, convolution bool) *executable {
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
	if convolution {
		kernel, err := f.Constant(make([]float32, 3*3*3*4), 3, 3, 3, 4)
		if err != nil {
			t.Fatal(err)
		}
		axes := compute.ConvolveAxesConfig{InputBatch: 0, InputChannels: 3, InputSpatial: []int{1, 2},
			KernelInputChannels: 2, KernelOutputChannels: 3, KernelSpatial: []int{0, 1},
			OutputBatch: 0, OutputChannels: 3, OutputSpatial: []int{1, 2}}
		if y, err = f.ConvGeneral(y, kernel, axes, nil, nil, nil, nil, 1, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Return([]compute.Value{y}, nil); err != nil {
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
