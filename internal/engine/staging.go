package engine

import (
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/internal/golower"
)

// Batch tensors arrive in host memory (a loader's collate makes them), and
// GoMLX copies each into a buffer of the backend when a program runs. On
// the pure-Go backend that buffer comes out of the backend's pool and, fed
// by the user, never goes back to it: every step takes one batch's worth
// (~200 KB for the MNIST MLP) out of the pool, which the step's own ops
// then allocate anew. A program instead keeps one shared buffer per batch
// tensor (its staging tensors) and copies each batch into it, the same
// one copy GoMLX would make, so that steps after the first take nothing
// out of the pool.

// staged returns the tensor to pass in argument slot i for the batch
// tensor t: t itself where staging does not apply (a backend other than
// the pure-Go one, a tensor already on a device, a packed dtype), else the
// slot's staging tensor (made on first use or when t's shape changes)
// holding a copy of t.
func (p *Program) staged(i int, t *tensors.Tensor) *tensors.Tensor {
	backend, ok := p.engine.Backend.(*golower.Backend)
	if !ok || t == nil || !t.Ok() || t.IsOnAnyDevice() || t.IsShared() || t.DType().IsPacked() {
		return t
	}
	for len(p.staging) <= i {
		p.staging = append(p.staging, nil)
	}
	s := p.staging[i]
	if s == nil || !s.Ok() || !s.Shape().Equal(t.Shape()) {
		if s != nil {
			_ = s.FinalizeAll()
		}
		var err error
		if s, err = tensors.FromShapeForBackend(backend, 0, t.Shape()); err != nil || !s.IsShared() {
			p.staging[i] = nil
			return t
		}
		p.staging[i] = s
	}
	var copyErr error
	err := t.ConstBytes(func(src []byte) {
		copyErr = s.MutableBytes(func(dst []byte) { copy(dst, src) })
	})
	if err != nil || copyErr != nil {
		return t
	}
	return s
}
