package fastconv

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/gomlx/compute"
)

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
// shift_tiles.go), examples/cnn 0.89–0.97× and ~1.0×, the MLP of
// examples/mnist 0.78–0.87× and the autoencoder 0.80–0.93× at two
// threads but 1.0–1.07× at one, the transformer of examples/chargpt
// 0.98–1.07× and the LSTM of examples/seqclass 1.03–1.49× at two threads
// and 1.05–1.10× at one. Side by side pays where ops are big enough that
// two can run at once; a long chain of small ops (the LSTM's steps, a
// logistic regression) pays the hand-over between executor goroutines at
// every op and has little to run beside it.
//
// ChooseOpsModePerGraph makes a wrapper decide when it compiles a graph:
// side by side when the graph has a convolution, or when there is more
// than one core and its matrix products average at least
// MinSideBySideMatmulMACs multiply-adds (the MLP's 9 products average
// 5.7M, the autoencoder's 6.7M, the transformer's 99 products 20M, the
// LSTM's 99 0.16M, a 784-10 logistic regression's at batch 64 0.5M); one
// op at a time otherwise. For the latter it counts one more execution in
// flight while the graph runs, so that the backend runs it one op at a
// time. The count is the same the backend keeps for concurrent
// executions, so nothing else changes: a graph run while another is in
// flight runs one op at a time anyway, and each op computes the same bits
// in either mode.

// ChooseOpsModePerGraph makes b's Go backend, in its default execution
// mode, run a graph's independent ops side by side only when it pays (see
// above). It returns an error when the wrapped backend keeps no count of
// executions in flight (another backend, or a version of the Go backend
// without NumLiveExecutions); b is then unchanged.
func (b *Backend) ChooseOpsModePerGraph() error {
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

// MinSideBySideMatmulMACs is the least mean size of a graph's matrix
// products, in multiply-adds, at which ChooseOpsModePerGraph runs
// a graph without a convolution side by side when there is more than one
// core (GOMAXPROCS > 1 when the graph is compiled).
const MinSideBySideMatmulMACs = 1 << 20

// oneOpAtATimeFor returns the counter an executable of bld raises while it
// runs, or nil when it runs as the backend chooses: when
// ChooseOpsModePerGraph is off, the graph has a convolution, or
// GOMAXPROCS > 1 and its matrix products average at least
// MinSideBySideMatmulMACs.
func (bld *builder) oneOpAtATimeFor() *atomic.Int32 {
	if bld.hasConvolution.Load() {
		return nil
	}
	if n := bld.matmuls.Load(); n > 0 && runtime.GOMAXPROCS(0) > 1 && bld.matmulMACs.Load()/n >= MinSideBySideMatmulMACs {
		return nil
	}
	return bld.backend.oneOpAtATime.Load()
}

// countDotGeneral counts a DotGeneral of lhs by rhs: lhs's size times the
// rhs axes that are neither contracted nor batch axes multiply-adds.
func (f *function) countDotGeneral(lhs, rhs compute.Value, rhsContractingAxes, rhsBatchAxes []int) {
	lhsShape, err := f.Function.Shape(lhs)
	if err != nil {
		return
	}
	rhsShape, err := f.Function.Shape(rhs)
	if err != nil {
		return
	}
	macs := int64(lhsShape.Size())
	for axis, dim := range rhsShape.Dimensions {
		if !slices.Contains(rhsContractingAxes, axis) && !slices.Contains(rhsBatchAxes, axis) {
			macs *= int64(dim)
		}
	}
	f.builder.matmuls.Add(1)
	f.builder.matmulMACs.Add(macs)
}

// countDense counts products matrix products of x [batch..., in] by weight
// (in·out values): x's size times out multiply-adds each.
func (f *function) countDense(x, weight compute.Value, products int64) {
	xShape, err := f.Function.Shape(x)
	if err != nil || xShape.Rank() == 0 {
		return
	}
	wShape, err := f.Function.Shape(weight)
	if err != nil {
		return
	}
	in := xShape.Dimensions[xShape.Rank()-1]
	if in == 0 {
		return
	}
	f.builder.matmuls.Add(products)
	f.builder.matmulMACs.Add(products * int64(xShape.Size()) * int64(wShape.Size()/in))
}
