package golower

import (
	"sync"
	"sync/atomic"

	"github.com/gomlx/compute"
)

// builder wraps a backend builder so its functions lower convolutions.
type builder struct {
	compute.Builder
	backend *Backend

	mu        sync.Mutex
	functions map[compute.Function]*function // inner function → its wrapper

	// hasConvolution is set by the first ConvGeneral built on any of the
	// builder's functions.
	hasConvolution atomic.Bool
	// matmuls and matmulMACs count the matrix products built on the
	// builder's functions (DotGeneral, FusedDense and each product of
	// FusedDenseVJP) and their multiply-adds (graph_stats.go).
	matmuls, matmulMACs atomic.Int64

	// recycleSlots are the shapes of the main function's recycle slots,
	// set by its Return (recycle.go).
	recycleSlots []recycleSlot
}

func newBuilder(b *Backend, inner compute.Builder) *builder {
	return &builder{Builder: inner, backend: b, functions: map[compute.Function]*function{}}
}

// wrapFunction returns the one wrapper of an inner function, so that
// identity comparisons (Parent, closures) keep working.
func (bld *builder) wrapFunction(inner compute.Function) compute.Function {
	if inner == nil {
		return nil
	}
	bld.mu.Lock()
	defer bld.mu.Unlock()
	if w, ok := bld.functions[inner]; ok {
		return w
	}
	w := &function{Function: inner, builder: bld}
	bld.functions[inner] = w
	return w
}

// Main implements compute.Builder.
func (bld *builder) Main() compute.Function { return bld.wrapFunction(bld.Builder.Main()) }

// NewFunction implements compute.Builder.
func (bld *builder) NewFunction(name string) (compute.Function, error) {
	fn, err := bld.Builder.NewFunction(name)
	if err != nil {
		return nil, err
	}
	return bld.wrapFunction(fn), nil
}

// Compile implements compute.Builder.
func (bld *builder) Compile() (compute.Executable, error) {
	exec, err := bld.Builder.Compile()
	if err != nil {
		return nil, err
	}
	return &executable{Executable: exec, backend: bld.backend, running: bld.runCounterFor(), recycleSlots: bld.recycleSlots}, nil
}

// executable unwraps input buffers and wraps output buffers, and raises
// running, when set, while it runs (the backend's RunCounter chose it;
// graph_stats.go).
type executable struct {
	compute.Executable
	backend *Backend
	running *atomic.Int32
	// recycleSlots are the shapes of the parameters after the graph's own
	// that take recycled buffers (recycle.go).
	recycleSlots []recycleSlot
}

// Execute implements compute.Executable.
func (e *executable) Execute(inputs []compute.Buffer, donate []bool, defaultDevice compute.DeviceNum) ([]compute.Buffer, error) {
	if e.running != nil {
		e.running.Add(1)
		defer e.running.Add(-1)
	}
	inner := make([]compute.Buffer, len(inputs), len(inputs)+len(e.recycleSlots))
	for i, buf := range inputs {
		inner[i] = unwrapBuffer(buf)
	}
	inner, donate, err := e.withRecycled(inner, donate)
	if err != nil {
		return nil, err
	}
	outputs, err := e.Executable.Execute(inner, donate, defaultDevice)
	for i, buf := range outputs {
		outputs[i] = e.backend.wrapBuffer(buf)
	}
	return outputs, err
}
