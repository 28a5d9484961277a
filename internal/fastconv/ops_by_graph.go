package fastconv

import (
	"fmt"
	"reflect"
	"sync/atomic"

	"github.com/gomlx/compute"
)

// The Go backend's execution mode, chosen per graph.
//
// In its default mode the Go backend runs a graph's independent ops side
// by side when that graph is the only execution in flight on the backend,
// and one op at a time (each big op split over the cores) when others run:
// at each Execute it reads the count of executions in flight, its exported
// field NumLiveExecutions. Which mode is faster depends on the graph.
// BenchmarkZooBackendModes (examples/internal/speedtable) measured, paired
// in one process on 2 cores, side by side against one op at a time:
// examples/resnet 0.81–0.88× the step at two threads and 0.88–0.94× at one
// (its shifted convolutions are also tiled; see shift_tiles.go),
// examples/cnn 0.90–0.97× and ~1.0×, but the transformer of
// examples/chargpt 0.98–1.07× and the LSTM of examples/seqclass
// 1.03–1.49× at two threads and 1.06–1.10× at one: a long chain of small
// ops pays the hand-over between executor goroutines at every op and has
// little to run beside it.
//
// SideBySideOnlyWithConvolutions makes a wrapper count one more execution
// in flight while it runs a graph without a convolution, so that the
// backend runs such a graph one op at a time and a graph with one as it
// would alone. The count is the same the backend keeps for concurrent
// executions, so nothing else changes: a graph run while another is in
// flight runs one op at a time anyway.

// SideBySideOnlyWithConvolutions makes b's Go backend, in its default
// execution mode, run a graph's independent ops side by side only when
// the graph has a convolution (see above). It returns an error when the
// wrapped backend keeps no count of executions in flight (another backend,
// or a version of the Go backend without NumLiveExecutions); b is then
// unchanged.
func (b *Backend) SideBySideOnlyWithConvolutions() error {
	live := liveExecutionsOf(b.Backend)
	if live == nil {
		return fmt.Errorf("fastconv: backend %q keeps no count of executions in flight (NumLiveExecutions): "+
			"its execution mode cannot be chosen per graph", b.Backend.Name())
	}
	b.oneOpAtATime.Store(live)
	return nil
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

// oneOpAtATimeFor returns the counter an executable of bld raises while it
// runs, or nil when it runs as the backend chooses: when
// SideBySideOnlyWithConvolutions is off or the graph has a convolution.
func (bld *builder) oneOpAtATimeFor() *atomic.Int32 {
	if bld.hasConvolution.Load() {
		return nil
	}
	return bld.backend.oneOpAtATime.Load()
}
