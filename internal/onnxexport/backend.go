package onnxexport

import (
	"sync"

	"github.com/gomlx/compute"
)

// Backend wraps a compute.Backend and records every function built on it.
// Buffers, executables and devices are the wrapped backend's.
type Backend struct {
	compute.Backend

	mu     sync.Mutex
	traces []*Trace
}

// Wrap returns a recording wrapper of inner.
func Wrap(inner compute.Backend) *Backend { return &Backend{Backend: inner} }

// Capabilities are the wrapped backend's, less the ops the lowering does
// not handle (GoMLX then decomposes fused ops into ones it does). Closures
// are built (function.Closure), so that the op taking one is refused by
// name; top-level sub-functions are refused (builder.NewFunction).
func (b *Backend) Capabilities() compute.Capabilities {
	c := b.Backend.Capabilities()
	ops := map[compute.OpType]bool{}
	for op, ok := range c.Operations {
		if ok && supported[op] {
			ops[op] = true
		}
	}
	c.Operations = ops
	c.Functions = true
	c.PreferConstantsForVariables = true
	return c
}

// Builder implements compute.Backend: the builder's main function is
// recorded as a new Trace.
func (b *Backend) Builder(name string) compute.Builder {
	inner := b.Backend.Builder(name)
	t := &Trace{Name: name, values: map[compute.Value]*value{}}
	b.mu.Lock()
	b.traces = append(b.traces, t)
	b.mu.Unlock()
	return &builder{Builder: inner, trace: t}
}

// Traces returns the traces recorded so far, oldest first.
func (b *Backend) Traces() []*Trace {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*Trace(nil), b.traces...)
}

// builder records its main function; other functions are refused.
type builder struct {
	compute.Builder
	trace *Trace
	main  *function
}

// Main implements compute.Builder.
func (bld *builder) Main() compute.Function {
	if bld.main == nil {
		bld.main = newFunction(bld, bld.Builder.Main())
	}
	return bld.main
}

// NewFunction implements compute.Builder: sub-functions have no ONNX
// lowering here.
func (bld *builder) NewFunction(name string) (compute.Function, error) {
	return nil, refuse("NewFunction (a sub-function "+name+")", "")
}
