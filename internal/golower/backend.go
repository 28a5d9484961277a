package golower

import (
	"sync/atomic"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
)

// Backend wraps a compute.Backend so that the convolutions built on it run
// through Lowering where Rules say that is faster; every other op, and the
// buffers and executables, are the wrapped backend's, behind thin wrappers
// that make GoMLX see one backend instance (a tensor remembers the backend
// of its buffer and refuses to be used with another). Name, String,
// Description and Capabilities are the wrapped backend's, so messages and
// capability checks read the same.
type Backend struct {
	compute.Backend
	rules    Rules
	lowering Lowering
	lowered  atomic.Int64

	kernelConvs atomic.Int64
	kernelPools atomic.Int64

	loweredPools      atomic.Int64
	loweredBatchNorms atomic.Int64
	reusedBatchNorms  atomic.Int64
	reusedPatches     atomic.Int64
	shiftedConvs      atomic.Int64
	tiledShifts       atomic.Int64
	scatteredConvs    atomic.Int64

	// runCounter chooses the counter each compiled graph raises while it
	// runs (nil: none; see graph_stats.go).
	runCounter atomic.Pointer[RunCounter]

	// bin keeps the buffers given to Recycle (recycle.go).
	bin recycleBin
}

// KernelConvs returns how many convolutions (forward and gradient) this
// backend has left to the inner backend's kernels (Lowering.ConvKernel)
// instead of lowering them.
func (b *Backend) KernelConvs() int64 { return b.kernelConvs.Load() }

// KernelPools returns how many max or min pooling ops (forward and
// gradient) this backend has left to the inner backend's kernels
// (Lowering.PoolKernel) instead of lowering them.
func (b *Backend) KernelPools() int64 { return b.kernelPools.Load() }

// ScatteredConvs returns how many of the lowered convolutions (Lowered)
// were full-padded ones multiplied first and their shifted products
// summed (input gradients of valid stride-1 convolutions; see scatter.go).
func (b *Backend) ScatteredConvs() int64 { return b.scatteredConvs.Load() }

// ShiftedConvs returns how many of the lowered convolutions (Lowered)
// built their patches from shifted runs of the flattened input
// (stride-1 convolutions; see shift.go).
func (b *Backend) ShiftedConvs() int64 { return b.shiftedConvs.Load() }

// TiledShifts is how many of the ShiftedConvs built their patches in tiles
// (shift_tiles.go, Lowering.ShiftTileBytes).
func (b *Backend) TiledShifts() int64 { return b.tiledShifts.Load() }

// ReusedPatches returns how many of the lowered convolutions (Lowered)
// were emitted from the patches of an earlier convolution of the same
// input (kernel gradients; see reuse.go) instead of gathering their own.
func (b *Backend) ReusedPatches() int64 { return b.reusedPatches.Load() }

// LoweredBatchNorms returns how many batch normalization ops (training,
// inference and gradient) this backend has lowered so far. They are
// lowered whatever the Rules say: the Go backend has none of its own.
func (b *Backend) LoweredBatchNorms() int64 { return b.loweredBatchNorms.Load() }

// ReusedBatchNorms counts the BatchNormGradient ops lowered from the
// values their forward BatchNormForTraining kept (bnreuse.go).
func (b *Backend) ReusedBatchNorms() int64 { return b.reusedBatchNorms.Load() }

// LoweredPools returns how many pooling ops (forward and gradient) this
// backend has lowered so far.
func (b *Backend) LoweredPools() int64 { return b.loweredPools.Load() }

// Lowered returns how many convolutions (forward and gradient) this
// backend has lowered onto DotGeneral so far.
func (b *Backend) Lowered() int64 { return b.lowered.Load() }

// Wrap returns inner with convolutions lowered onto DotGeneral by the
// default Rules. It is the one call an engine needs:
//
//	backend = golower.Wrap(backend)
//
// A backend that is already wrapped is returned as is.
func Wrap(inner compute.Backend) compute.Backend {
	return WrapWith(inner, DefaultRules(), Lowering{})
}

// WrapWith is Wrap with explicit rules and lowering options.
func WrapWith(inner compute.Backend, rules Rules, lowering Lowering) compute.Backend {
	if b, ok := inner.(*Backend); ok {
		return b
	}
	return &Backend{Backend: inner, rules: rules, lowering: lowering}
}

// Inner returns the wrapped backend.
func (b *Backend) Inner() compute.Backend { return b.Backend }

// Builder returns a builder whose functions lower convolutions.
func (b *Backend) Builder(name string) compute.Builder {
	return newBuilder(b, b.Backend.Builder(name))
}

// BufferFromFlatData implements compute.DataInterface.
func (b *Backend) BufferFromFlatData(deviceNum compute.DeviceNum, flat any, shape shapes.Shape) (compute.Buffer, error) {
	buf, err := b.Backend.BufferFromFlatData(deviceNum, flat, shape)
	return b.wrapBuffer(buf), err
}

// NewSharedBuffer implements compute.DataInterface.
func (b *Backend) NewSharedBuffer(deviceNum compute.DeviceNum, shape shapes.Shape) (compute.Buffer, any, error) {
	buf, flat, err := b.Backend.NewSharedBuffer(deviceNum, shape)
	return b.wrapBuffer(buf), flat, err
}
