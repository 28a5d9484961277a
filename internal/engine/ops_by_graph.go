package engine

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/gomlx/compute"
	"github.com/voltml/volt/internal/golower"
)

// OpsByGraph is volt's option of the Go backend's configuration
// ("go:ops_by_graph", DefaultBackend): ops side by side in graphs with a
// convolution, or with large matrix products when there is more than one
// core, one at a time in the others (chooseOpsModePerGraph). GoMLX does
// not know it: Backend takes it out of the configuration it hands to GoMLX.
const OpsByGraph = "ops_by_graph"

// withoutOpsByGraph returns config without the OpsByGraph option and
// whether it had it. An OpsByGraph beside the modes it chooses between
// (ops_sequential, ops_parallel), or on another backend than "go", is an
// error.
func withoutOpsByGraph(config string) (string, bool, error) {
	name, options, _ := strings.Cut(config, ":")
	list := strings.Split(options, ",")
	if !slices.Contains(list, OpsByGraph) {
		return config, false, nil
	}
	if name != "go" {
		return "", false, fmt.Errorf("backend %q: %s is an option of the go backend only", config, OpsByGraph)
	}
	for _, mode := range []string{"ops_sequential", "ops_parallel"} {
		if slices.Contains(list, mode) {
			return "", false, fmt.Errorf("backend %q: %s chooses between ops_sequential and ops_parallel per graph; "+
				"name one of the three", config, OpsByGraph)
		}
	}
	list = slices.DeleteFunc(list, func(o string) bool { return o == OpsByGraph })
	if len(list) == 0 {
		return name, true, nil
	}
	return name + ":" + strings.Join(list, ","), true, nil
}

// The Go backend's execution mode, chosen per graph.
//
// In its default mode the Go backend runs a graph's independent ops side
// by side when that graph is the only execution in flight on the backend,
// and one op at a time (each big op split over the cores) when others run:
// at each Execute it reads the count of executions in flight, its exported
// field NumLiveExecutions. Which mode is faster depends on the graph and
// the cores. BenchmarkZooBackendModes (examples/internal/speedtable)
// measured, paired in one process on 2 cores, side by side against one op
// at a time: examples/resnet 0.81–0.88× the step at two threads and
// 0.88–0.94× at one (its shifted convolutions are also tiled; see
// golower's shift_tiles.go), examples/cnn 0.89–0.97× and ~1.0×, the MLP of
// examples/mnist 0.78–0.87× and the autoencoder 0.80–0.93× at two
// threads but 1.0–1.07× at one, the transformer of examples/chargpt
// 0.98–1.07× and the LSTM of examples/seqclass 1.03–1.49× at two threads
// and 1.05–1.10× at one. Side by side pays where ops are big enough that
// two can run at once; a long chain of small ops (the LSTM's steps, a
// logistic regression) pays the hand-over between executor goroutines at
// every op and has little to run beside it.
//
// chooseOpsModePerGraph makes the golower wrapper decide when it compiles
// a graph, from what it counted while the graph was built
// (golower.GraphStats): side by side when the graph has a convolution, or
// when there is more than one core and its matrix products average at
// least MinSideBySideMatmulMACs multiply-adds (the MLP's 9 products
// average 5.7M, the autoencoder's 6.7M, the transformer's 99 products 20M,
// the LSTM's 99 0.16M, a 784-10 logistic regression's at batch 64 0.5M);
// one op at a time otherwise. For the latter the wrapper counts one more
// execution in flight while the graph runs, so that the backend runs it
// one op at a time. The count is the same the backend keeps for
// concurrent executions, so nothing else changes: a graph run while
// another is in flight runs one op at a time anyway, and each op computes
// the same bits in either mode. How many executor goroutines the side by
// side graphs get is executors.go's.

// MinSideBySideMatmulMACs is the least mean size of a graph's matrix
// products, in multiply-adds, at which chooseOpsModePerGraph runs a graph
// without a convolution side by side when there is more than one core
// (GOMAXPROCS > 1 when the graph is compiled).
const MinSideBySideMatmulMACs = 1 << 20

// chooseOpsModePerGraph makes b's Go backend, in its default execution
// mode, run a graph's independent ops side by side only when it pays (see
// above). It returns an error when the wrapped backend keeps no count of
// executions in flight (another backend, or a version of the Go backend
// without NumLiveExecutions); b is then unchanged.
func chooseOpsModePerGraph(b *golower.Backend) error {
	live := liveExecutionsOf(b.Inner())
	if live == nil {
		return fmt.Errorf("the backend keeps no count of executions in flight (NumLiveExecutions): "+
			"its execution mode cannot be chosen per graph (%s)", OpsByGraph)
	}
	b.SetRunCounter(func(graph golower.GraphStats) *atomic.Int32 {
		if sideBySide(graph, runtime.GOMAXPROCS(0)) {
			return nil
		}
		return live
	})
	return nil
}

// sideBySide reports whether a graph is run with its independent ops side
// by side on procs cores: when it has a convolution, or procs > 1 and its
// matrix products average at least MinSideBySideMatmulMACs.
func sideBySide(graph golower.GraphStats, procs int) bool {
	if graph.HasConvolution {
		return true
	}
	return procs > 1 && graph.Matmuls > 0 && graph.MatmulMACs/graph.Matmuls >= MinSideBySideMatmulMACs
}

// liveExecutionsOf returns the Go backend's count of executions in
// flight, or nil when inner has none: an exported field
// NumLiveExecutions of type atomic.Int32 of the struct inner points to.
func liveExecutionsOf(inner compute.Backend) *atomic.Int32 {
	v := reflect.ValueOf(inner)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	field := v.Elem().FieldByName("NumLiveExecutions")
	if !field.IsValid() || !field.CanAddr() || !field.Addr().CanInterface() {
		return nil
	}
	live, _ := field.Addr().Interface().(*atomic.Int32)
	return live
}
