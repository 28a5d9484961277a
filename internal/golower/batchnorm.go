package golower

import (
	"fmt"
	"slices"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
)

// The Go backend of compute v0.1.14 has no BatchNormForTraining,
// BatchNormForInference or BatchNormGradient ("sorry, op ... not
// implemented"), which GoMLX's graph.InternalBatchNorm* (and so
// layers/norm.BatchNorm and volt's batchnorm package) call. The functions
// below emit them as reductions and elementwise ops with XLA's semantics
// (https://openxla.org/xla/operation_semantics#batchnormtraining):
//
//	mean  = Σx / n              over every axis but featureAxis (n elements per feature)
//	var   = Σ(x - mean)² / n    biased, two passes (XLA's own expansion uses E[x²] - mean²)
//	y     = (x - mean) · rsqrt(var + ε) · scale + offset
//
// and the gradient given the mean and variance of the forward pass, with
// x̂ = (x - mean) · rsqrt(var + ε) and dy the output's gradient:
//
//	dOffset = Σdy,  dScale = Σdy·x̂
//	dx      = scale · rsqrt(var + ε) · (dy - dOffset/n - x̂ · dScale/n)
//
// Half-precision operands are computed in float32 and converted back, as
// PyTorch and XLA's CPU expansion accumulate them. The per-feature sums of
// float32 (and half-precision) operands (the mean, the variance, dOffset and
// dScale) are reduced one axis at a time (stagedSum), so that no partial
// sum adds more than about maxStageRun values in sequence. Summed in one
// float32 run by the Go backend's ReduceSum, the error of Σdy over a
// feature's n·h·w values reached 1e-5 relative after a single ResNet step
// and the loss drifted 3.7e-4 from PyTorch's within 11 SGD steps (parity's
// TestResNetParity), where PyTorch accumulates in float64 (acc_type<float,
// false> is double). Staged, the loss stays within 1.9e-7 of PyTorch's over
// the 50 steps, as it did accumulating in float64, without the operand's
// conversion to float64 (~8% of a ResNet step's CPU).

// bnOps emits ops on f and keeps the first error, so that a formula reads
// as a formula.
type bnOps struct {
	f           compute.Function
	shape       shapes.Shape // the operand's shape (in the compute dtype)
	featureAxis int
	reduceAxes  []int
	n           float64 // elements per feature
	dtype       dtypes.DType
	compute     dtypes.DType // the dtype the formulas run in
	accumulate  dtypes.DType // the dtype the per-feature sums run in
	staged      bool         // sum one axis at a time in the compute dtype (stagedSum)
	err         error
}

func newBNOps(f compute.Function, operand compute.Value, featureAxis int) (*bnOps, error) {
	shape, err := f.Shape(operand)
	if err != nil {
		return nil, err
	}
	if shape.IsDynamic() {
		return nil, fmt.Errorf("golower: batch normalization of a dynamic shape %s is not lowered", shape)
	}
	rank := shape.Rank()
	if featureAxis < 0 {
		featureAxis += rank
	}
	if featureAxis < 0 || featureAxis >= rank {
		return nil, fmt.Errorf("golower: batch normalization feature axis %d out of range for shape %s",
			featureAxis, shape)
	}
	o := &bnOps{f: f, featureAxis: featureAxis, dtype: shape.DType, compute: shape.DType, n: 1}
	switch shape.DType {
	case dtypes.Float64:
	case dtypes.Float32:
		o.staged = true
	case dtypes.Float16, dtypes.BFloat16:
		o.compute = dtypes.Float32
		o.staged = true
	default:
		return nil, fmt.Errorf("golower: batch normalization of dtype %s is not supported (floating point only)",
			shape.DType)
	}
	for axis, d := range shape.Dimensions {
		if axis != featureAxis {
			o.reduceAxes = append(o.reduceAxes, axis)
			o.n *= float64(d)
		}
	}
	o.shape = shapes.Make(o.compute, shape.Dimensions...)
	if o.staged {
		// An axis stageDims cannot split (a long prime batch) would add
		// more than maxStageTerms values in one run: accumulate in float64.
		dims, feature := o.stageDims()
		for i, d := range dims {
			if i != feature && d > maxStageTerms {
				o.staged, o.accumulate = false, dtypes.Float64
			}
		}
	}
	return o, nil
}

// in converts a value to the compute dtype.
func (o *bnOps) in(v compute.Value) compute.Value {
	if o.err != nil || o.compute == o.dtype {
		return v
	}
	v, o.err = o.f.ConvertDType(v, o.compute)
	return v
}

// out converts a value back to the operand's dtype.
func (o *bnOps) out(v compute.Value) compute.Value {
	if o.err != nil || o.compute == o.dtype {
		return v
	}
	v, o.err = o.f.ConvertDType(v, o.dtype)
	return v
}

// scalar is the constant c broadcast to a per-feature vector.
func (o *bnOps) scalar(c float64) compute.Value {
	if o.err != nil {
		return nil
	}
	var v compute.Value
	if o.compute == dtypes.Float64 {
		v, o.err = o.f.Constant([]float64{c})
	} else {
		v, o.err = o.f.Constant([]float32{float32(c)})
	}
	if o.err != nil {
		return nil
	}
	v, o.err = o.f.BroadcastInDim(v, shapes.Make(o.compute, o.shape.Dimensions[o.featureAxis]), nil)
	return v
}

// full reshapes a per-feature vector to the operand's rank (1 on every
// other axis), for the binary ops to broadcast: the Go backend's
// elementwise kernels take [1, …, 1, C] against [N, …, C] without
// materialising it (its BroadcastLeadingRHS pattern), where an explicit
// BroadcastInDim to the full shape ran a generic index iterator (20% of a
// ResNet step's CPU before this change).
func (o *bnOps) full(v compute.Value) compute.Value {
	if o.err != nil {
		return nil
	}
	dims := make([]int, o.shape.Rank())
	for i := range dims {
		dims[i] = 1
	}
	dims[o.featureAxis] = o.shape.Dimensions[o.featureAxis]
	v, o.err = o.f.Reshape(v, dims...)
	return v
}

// sum reduces x over every axis but the feature axis, one axis at a time
// (stagedSum) when o.staged, else accumulating in o.accumulate when set.
func (o *bnOps) sum(x compute.Value) compute.Value {
	if o.err != nil {
		return nil
	}
	if o.staged {
		return o.stagedSum(x)
	}
	if o.accumulate == dtypes.InvalidDType {
		x, o.err = o.f.ReduceSum(x, o.reduceAxes...)
		return x
	}
	if x, o.err = o.f.ConvertDType(x, o.accumulate); o.err != nil {
		return nil
	}
	if x, o.err = o.f.ReduceSum(x, o.reduceAxes...); o.err != nil {
		return nil
	}
	x, o.err = o.f.ConvertDType(x, o.compute)
	return x
}

// maxStageRun is the most terms stagedSum adds in one run: a longer axis
// is split in two (when its length has a divisor to split at), so that no
// partial sum adds more than about this many values in sequence.
const maxStageRun = 64

// maxStageTerms is the most terms a stage may add: an operand with an axis
// that splits no shorter sums in float64 instead.
const maxStageTerms = 256

// stageDims are the axes stagedSum reduces, in the order they lie: x's
// dimensions with the axes before the feature axis (outer) and after it
// (inner) each split into runs of at most maxStageRun where a divisor
// allows, and the index of the feature axis among them.
func (o *bnOps) stageDims() (dims []int, feature int) {
	for axis, d := range o.shape.Dimensions {
		switch {
		case axis == o.featureAxis:
			feature = len(dims)
			dims = append(dims, d)
		case d == 1:
		default:
			dims = append(dims, splitRun(d)...)
		}
	}
	return dims, feature
}

// splitRun splits an axis of length d into axes of at most maxStageRun
// (their product d), at the divisor nearest √d, as far as d has divisors.
func splitRun(d int) []int {
	if d <= maxStageRun {
		return []int{d}
	}
	best := 1
	for a := 2; a*a <= d; a++ {
		if d%a == 0 {
			best = a
		}
	}
	if best == 1 {
		return []int{d}
	}
	return append(splitRun(best), splitRun(d/best)...)
}

// stagedSum reduces x over every axis but the feature axis in float32, one
// axis at a time: the axes before the feature axis from the first (each a
// leading reduction, which the Go backend runs with SIMD), then those
// after it from the last (trailing reductions). Every partial sum adds at
// most about maxStageRun values, so the rounding error grows with the sum
// of the axes' lengths rather than with their product: for examples/resnet's
// [64, 28, 28, 16] activations (64+28+28 terms in sequence instead of
// 50,176) it stays at parity with PyTorch's float64 accumulation
// (TestResNetParity) without converting the operand to float64, which
// cost ~8% of a ResNet step's CPU.
func (o *bnOps) stagedSum(x compute.Value) compute.Value {
	dims, feature := o.stageDims()
	// A Reshape to the shape x already has is left out: the Go backend
	// copies the operand of a Reshape that has other users (the centering
	// Sub always is one), a whole pass over the activation for nothing
	// (examples/resnet's axes need no split: 9 such copies per step; the
	// step without them took 0.97× the wall time at one thread and at two,
	// paired in one process, 20 steps).
	if !slices.Equal(dims, o.shape.Dimensions) {
		if x, o.err = o.f.Reshape(x, dims...); o.err != nil {
			return nil
		}
	}
	for ; feature > 0; feature-- {
		if x, o.err = o.f.ReduceSum(x, 0); o.err != nil {
			return nil
		}
		dims = dims[1:]
	}
	for len(dims) > 1 {
		if x, o.err = o.f.ReduceSum(x, len(dims)-1); o.err != nil {
			return nil
		}
		dims = dims[:len(dims)-1]
	}
	return x
}

func (o *bnOps) binary(op func(lhs, rhs compute.Value) (compute.Value, error), lhs, rhs compute.Value) compute.Value {
	if o.err != nil {
		return nil
	}
	v, err := op(lhs, rhs)
	o.err = err
	return v
}

func (o *bnOps) add(lhs, rhs compute.Value) compute.Value { return o.binary(o.f.Add, lhs, rhs) }
func (o *bnOps) sub(lhs, rhs compute.Value) compute.Value { return o.binary(o.f.Sub, lhs, rhs) }
func (o *bnOps) mul(lhs, rhs compute.Value) compute.Value { return o.binary(o.f.Mul, lhs, rhs) }

// invStd is rsqrt(variance + epsilon), per feature.
func (o *bnOps) invStd(variance compute.Value, epsilon float32) compute.Value {
	v := o.add(variance, o.scalar(float64(epsilon)))
	if o.err != nil {
		return nil
	}
	v, o.err = o.f.Rsqrt(v)
	return v
}

// normalize is (x - mean) · invStd · scale + offset, with per-feature
// mean, invStd, scale and offset.
func (o *bnOps) normalize(x, mean, invStd, scale, offset compute.Value) compute.Value {
	return o.add(o.mul(o.sub(x, o.full(mean)), o.full(o.mul(invStd, scale))), o.full(offset))
}

// LowerBatchNormForTraining emits compute.Function.BatchNormForTraining:
// the normalized operand and the batch's mean and biased variance per
// feature.
func LowerBatchNormForTraining(f compute.Function, operand, scale, offset compute.Value, epsilon float32,
	featureAxis int) (normalized, mean, variance compute.Value, err error) {
	normalized, mean, variance, _, err = batchNormForTraining(f, operand, scale, offset, epsilon, featureAxis)
	return normalized, mean, variance, err
}

// batchNormForTraining is LowerBatchNormForTraining, also returning the
// centered operand and the inverse standard deviation it computed when
// BatchNormGradient can use them as they are (bnreuse.go): saved is nil
// for operands converted to another dtype for the formulas.
func batchNormForTraining(f compute.Function, operand, scale, offset compute.Value, epsilon float32,
	featureAxis int) (normalized, mean, variance compute.Value, saved *bnSaved, err error) {
	o, err := newBNOps(f, operand, featureAxis)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	x, scale, offset := o.in(operand), o.in(scale), o.in(offset)
	inverseN := o.scalar(1 / o.n)
	mean = o.mul(o.sum(x), inverseN)
	centered := o.sub(x, o.full(mean))
	variance = o.mul(o.sum(o.mul(centered, centered)), inverseN)
	invStd := o.invStd(variance, epsilon)
	normalized = o.add(o.mul(centered, o.full(o.mul(invStd, scale))), o.full(offset))
	normalized, mean, variance = o.out(normalized), o.out(mean), o.out(variance)
	if o.err != nil {
		return nil, nil, nil, nil, o.err
	}
	if o.compute == o.dtype {
		saved = &bnSaved{centered: centered, invStd: invStd}
	}
	return normalized, mean, variance, saved, nil
}

// LowerBatchNormForInference emits compute.Function.BatchNormForInference:
// the operand normalized with the given mean and variance.
func LowerBatchNormForInference(f compute.Function, operand, scale, offset, mean, variance compute.Value,
	epsilon float32, featureAxis int) (compute.Value, error) {
	o, err := newBNOps(f, operand, featureAxis)
	if err != nil {
		return nil, err
	}
	normalized := o.out(o.normalize(o.in(operand), o.in(mean), o.invStd(o.in(variance), epsilon), o.in(scale),
		o.in(offset)))
	if o.err != nil {
		return nil, o.err
	}
	return normalized, nil
}

// LowerBatchNormGradient emits compute.Function.BatchNormGradient: the
// gradients of BatchNormForTraining's normalized output with respect to the
// operand, scale and offset, given the mean and variance it used.
func LowerBatchNormGradient(f compute.Function, operand, scale, mean, variance, gradOutput compute.Value,
	epsilon float32, featureAxis int) (gradOperand, gradScale, gradOffset compute.Value, err error) {
	return batchNormGradient(f, operand, scale, mean, variance, gradOutput, epsilon, featureAxis, nil)
}

// batchNormGradient is LowerBatchNormGradient; a non-nil saved holds the
// forward's centered operand and inverse standard deviation for this
// operand, mean and variance (bnreuse.go), used instead of computing them
// again. With x̂ = (x - mean)·invStd, the gradients are
//
//	dOffset = Σdy, dScale = Σdy·x̂ = invStd·Σdy·(x - mean),
//	dx = (dy - dOffset/n - (x - mean)·invStd·dScale/n)·scale·invStd,
//
// so x̂ itself is never formed: one elementwise pass fewer.
func batchNormGradient(f compute.Function, operand, scale, mean, variance, gradOutput compute.Value,
	epsilon float32, featureAxis int, saved *bnSaved) (gradOperand, gradScale, gradOffset compute.Value, err error) {
	o, err := newBNOps(f, operand, featureAxis)
	if err != nil {
		return nil, nil, nil, err
	}
	x, scale, dy := o.in(operand), o.in(scale), o.in(gradOutput)
	var centered, invStd compute.Value
	if saved != nil {
		centered, invStd = saved.centered, saved.invStd
	} else {
		invStd = o.invStd(o.in(variance), epsilon)
		centered = o.sub(x, o.full(o.in(mean)))
	}
	gradOffset = o.sum(dy)
	gradScale = o.mul(o.sum(o.mul(dy, centered)), invStd)
	inverseN := o.scalar(1 / o.n)
	gradOperand = o.sub(o.sub(dy, o.full(o.mul(gradOffset, inverseN))),
		o.mul(centered, o.full(o.mul(o.mul(gradScale, invStd), inverseN))))
	gradOperand = o.mul(gradOperand, o.full(o.mul(scale, invStd)))
	gradOperand, gradScale, gradOffset = o.out(gradOperand), o.out(gradScale), o.out(gradOffset)
	if o.err != nil {
		return nil, nil, nil, o.err
	}
	return gradOperand, gradScale, gradOffset, nil
}

// batchNormGradientXHat is batchNormGradient as it was before bnreuse.go:
// x̂ formed in full, nothing reused; Lowering.NoBatchNormReuse keeps it to
// measure the difference.
func batchNormGradientXHat(f compute.Function, operand, scale, mean, variance, gradOutput compute.Value,
	epsilon float32, featureAxis int) (gradOperand, gradScale, gradOffset compute.Value, err error) {
	o, err := newBNOps(f, operand, featureAxis)
	if err != nil {
		return nil, nil, nil, err
	}
	x, scale, dy := o.in(operand), o.in(scale), o.in(gradOutput)
	invStd := o.invStd(o.in(variance), epsilon)
	xHat := o.mul(o.sub(x, o.full(o.in(mean))), o.full(invStd))
	gradOffset = o.sum(dy)
	gradScale = o.sum(o.mul(dy, xHat))
	inverseN := o.scalar(1 / o.n)
	gradOperand = o.sub(o.sub(dy, o.full(o.mul(gradOffset, inverseN))), o.mul(xHat, o.full(o.mul(gradScale, inverseN))))
	gradOperand = o.mul(gradOperand, o.full(o.mul(scale, invStd)))
	gradOperand, gradScale, gradOffset = o.out(gradOperand), o.out(gradScale), o.out(gradOffset)
	if o.err != nil {
		return nil, nil, nil, o.err
	}
	return gradOperand, gradScale, gradOffset, nil
}
