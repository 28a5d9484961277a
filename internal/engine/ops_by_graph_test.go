package engine

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/voltml/volt/internal/golower"
)

// TestWithoutOpsByGraph: volt's own option is taken out of the
// configuration GoMLX sees, wherever it stands, and refused beside the
// modes it chooses between or on another backend.
func TestWithoutOpsByGraph(t *testing.T) {
	for _, tc := range []struct {
		config, gomlx string
		byGraph       bool
		err           string
	}{
		{config: "go", gomlx: "go"},
		{config: "go:ops_sequential", gomlx: "go:ops_sequential"},
		{config: "go:ops_by_graph", gomlx: "go", byGraph: true},
		{config: "go:parallelism=1,ops_by_graph", gomlx: "go:parallelism=1", byGraph: true},
		{config: "go:ops_by_graph,parallelism=1", gomlx: "go:parallelism=1", byGraph: true},
		{config: "go:ops_by_graph,ops_sequential", err: "name one of the three"},
		{config: "go:ops_parallel,ops_by_graph", err: "name one of the three"},
		{config: "xla:cuda,ops_by_graph", err: "go backend only"},
	} {
		t.Run(tc.config, func(t *testing.T) {
			gomlx, byGraph, err := withoutOpsByGraph(tc.config)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), tc.config) {
					t.Fatalf("error %v, want one naming %q and saying %q", err, tc.config, tc.err)
				}
				return
			}
			if err != nil || gomlx != tc.gomlx || byGraph != tc.byGraph {
				t.Errorf("got %q, %v, %v; want %q, %v", gomlx, byGraph, err, tc.gomlx, tc.byGraph)
			}
		})
	}
}

// TestDefaultBackendChoosesPerGraph: volt's default backend is the Go
// backend with the mode chosen per graph, and a configuration that asks
// for two modes does not start.
func TestDefaultBackendChoosesPerGraph(t *testing.T) {
	t.Setenv(BackendEnvVar, "")
	if got := ResolveBackendConfig(""); got != "go:ops_by_graph" {
		t.Errorf("default backend %q, want go:ops_by_graph", got)
	}
	if _, err := Backend(""); err != nil {
		t.Fatal(err)
	}
	if _, err := Backend("go:ops_sequential,ops_by_graph"); err == nil {
		t.Error("a backend with two modes started")
	}
}

// TestUnknownGoOptionNamesOpsByGraph: GoMLX's error for an unknown option
// of the Go backend lists its own options; volt's adds ops_by_graph, which
// GoMLX does not know, so that a misspelt one finds it.
func TestUnknownGoOptionNamesOpsByGraph(t *testing.T) {
	for _, config := range []string{"go:ops_by_grahp", "go:ops_by_graph,executors=3"} {
		_, err := Backend(config)
		if err == nil {
			t.Fatalf("%s: started", config)
		}
		for _, want := range []string{config, "unknown configuration option", "volt adds ops_by_graph", `"go:ops_by_graph"`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not say %q", config, err, want)
			}
		}
	}
	if _, err := Backend("go:num_executors=x"); err == nil || strings.Contains(err.Error(), "volt adds") {
		t.Errorf("a bad value (not an unknown option) gave %v; want GoMLX's error alone", err)
	}
}

// TestGoBackendCountsLiveExecutions: the Go backend this module pins keeps
// its count of executions in flight where chooseOpsModePerGraph looks for
// it. A GoMLX upgrade that renames or retypes it fails here (and
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
	if err := chooseOpsModePerGraph(golower.WrapWith(inner, golower.DefaultRules(), golower.Lowering{}).(*golower.Backend)); err != nil {
		t.Error(err)
	}
	other := golower.WrapWith(noCounter{inner}, golower.DefaultRules(), golower.Lowering{}).(*golower.Backend)
	if err := chooseOpsModePerGraph(other); err == nil || !strings.Contains(err.Error(), "NumLiveExecutions") {
		t.Errorf("a backend without the counter: error %v, want one naming NumLiveExecutions", err)
	}
}

// noCounter is a backend whose struct has no NumLiveExecutions.
type noCounter struct{ compute.Backend }

// TestSideBySide: a graph runs side by side when it has a convolution or,
// with more than one core, matrix products of MinSideBySideMatmulMACs on
// average; one op at a time otherwise (the figures golower.GraphStats
// gives the graphs named: TestGraphStats there).
func TestSideBySide(t *testing.T) {
	large := golower.GraphStats{Matmuls: 1, MatmulMACs: 128 * 128 * 128}
	for _, tc := range []struct {
		name  string
		graph golower.GraphStats
		procs int
		want  bool
	}{
		{"no convolution", golower.GraphStats{}, 2, false},
		{"a convolution", golower.GraphStats{HasConvolution: true}, 2, true},
		{"a convolution, one core", golower.GraphStats{HasConvolution: true}, 1, true},
		{"large products", large, 2, true},
		{"large products, one core", large, 1, false},
		{"small products", golower.GraphStats{Matmuls: 1, MatmulMACs: 8 * 8 * 8}, 2, false},
		{"products just at the limit", golower.GraphStats{Matmuls: 3, MatmulMACs: 3 * MinSideBySideMatmulMACs}, 2, true},
		{"products just below it", golower.GraphStats{Matmuls: 3, MatmulMACs: 3*MinSideBySideMatmulMACs - 3}, 2, false},
	} {
		if got := sideBySide(tc.graph, tc.procs); got != tc.want {
			t.Errorf("%s: side by side %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestOpsByGraphRaisesTheBackendsCount: with the mode chosen per graph, a
// graph without a convolution or products runs with the backend's own
// count of executions in flight raised by one (so that the backend runs it
// one op at a time), and lowered after; without it, nothing is raised.
func TestOpsByGraphRaisesTheBackendsCount(t *testing.T) {
	for _, byGraph := range []bool{true, false} {
		inner, err := compute.NewWithConfig("go")
		if err != nil {
			t.Fatal(err)
		}
		counting := &liveCounting{Backend: inner}
		b := golower.WrapWith(counting, golower.DefaultRules(), golower.Lowering{}).(*golower.Backend)
		if byGraph {
			if err := chooseOpsModePerGraph(b); err != nil {
				t.Fatal(err)
			}
		}
		bld := b.Builder("tanh")
		f := bld.Main()
		x, err := f.Parameter("x", shapes.Make(dtypes.Float32, 2, 3), nil)
		if err != nil {
			t.Fatal(err)
		}
		y, err := f.Tanh(x)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Return([]compute.Value{y}, nil); err != nil {
			t.Fatal(err)
		}
		exec, err := bld.Compile()
		if err != nil {
			t.Fatal(err)
		}
		input, err := b.BufferFromFlatData(0, make([]float32, 6), shapes.Make(dtypes.Float32, 2, 3))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := exec.Execute([]compute.Buffer{input}, nil, 0); err != nil {
			t.Fatal(err)
		}
		want := int32(0)
		if byGraph {
			want = 1
		}
		if counting.during != want || counting.NumLiveExecutions.Load() != 0 {
			t.Errorf("by graph %v: count %d while running and %d after, want %d and 0",
				byGraph, counting.during, counting.NumLiveExecutions.Load(), want)
		}
		inner.Finalize()
	}
}

// liveCounting is a backend with a count of executions in flight of its
// own, as the Go backend's, that records it when each graph starts.
type liveCounting struct {
	compute.Backend
	NumLiveExecutions atomic.Int32
	during            int32
}

func (l *liveCounting) Builder(name string) compute.Builder {
	return liveCountingBuilder{l.Backend.Builder(name), l}
}

type liveCountingBuilder struct {
	compute.Builder
	backend *liveCounting
}

func (b liveCountingBuilder) Compile() (compute.Executable, error) {
	exec, err := b.Builder.Compile()
	return liveCountingExecutable{exec, b.backend}, err
}

type liveCountingExecutable struct {
	compute.Executable
	backend *liveCounting
}

func (e liveCountingExecutable) Execute(inputs []compute.Buffer, donate []bool, device compute.DeviceNum) ([]compute.Buffer, error) {
	e.backend.during = e.backend.NumLiveExecutions.Load()
	return e.Executable.Execute(inputs, donate, device)
}
