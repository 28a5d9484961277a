package golower

import (
	"github.com/gomlx/compute"
)

// function wraps a backend function: ConvGeneral may be lowered, functions
// passed in or out are unwrapped or wrapped, all other ops are the inner
// function's.
type function struct {
	compute.Function
	builder *builder
	patches patchCache // the patch matrices built on this function (reuse.go)
	// batchNorms holds what this function's batch normalizations keep for
	// their gradients (bnreuse.go).
	batchNorms bnCache
}

// unwrapFunction returns the inner function of a wrapper.
func unwrapFunction(fn compute.Function) compute.Function {
	if w, ok := fn.(*function); ok {
		return w.Function
	}
	return fn
}

// Builder implements compute.Function.
func (f *function) Builder() compute.Builder { return f.builder }

// Parent implements compute.Function.
func (f *function) Parent() compute.Function { return f.builder.wrapFunction(f.Function.Parent()) }

// Closure implements compute.Function.
func (f *function) Closure() (compute.Function, error) {
	c, err := f.Function.Closure()
	if err != nil {
		return nil, err
	}
	return f.builder.wrapFunction(c), nil
}

// Call implements compute.Function.
func (f *function) Call(fn compute.Function, inputs ...compute.Value) ([]compute.Value, error) {
	return f.Function.Call(unwrapFunction(fn), inputs...)
}

// Sort implements compute.Function.
func (f *function) Sort(comparator compute.Function, axis int, isStable bool, inputs ...compute.Value) ([]compute.Value, error) {
	return f.Function.Sort(unwrapFunction(comparator), axis, isStable, inputs...)
}

// While implements compute.Function.
func (f *function) While(cond, body compute.Function, initialState ...compute.Value) ([]compute.Value, error) {
	return f.Function.While(unwrapFunction(cond), unwrapFunction(body), initialState...)
}

// If implements compute.Function.
func (f *function) If(pred compute.Value, trueBranch, falseBranch compute.Function) ([]compute.Value, error) {
	return f.Function.If(pred, unwrapFunction(trueBranch), unwrapFunction(falseBranch))
}

// ConvGeneral implements compute.Function: left to the inner backend when
// Lowering.ConvKernel says it runs it faster (internal/gokernels, oneDNN),
// else lowered onto DotGeneral when the backend's rules choose it, else
// the inner backend's convolution.
func (f *function) ConvGeneral(input, kernel compute.Value, axes compute.ConvolveAxesConfig,
	strides []int, paddings [][2]int, inputDilations, kernelDilations []int,
	channelGroupCount, batchGroupCount int) (compute.Value, error) {
	f.builder.hasConvolution.Store(true)
	inputShape, err := f.Function.Shape(input)
	if err != nil {
		return nil, err
	}
	kernelShape, err := f.Function.Shape(kernel)
	if err != nil {
		return nil, err
	}
	conv := Conv{Input: inputShape, Kernel: kernelShape, Axes: axes, Strides: strides, Paddings: paddings,
		InputDilations: inputDilations, KernelDilations: kernelDilations,
		ChannelGroupCount: channelGroupCount, BatchGroupCount: batchGroupCount}
	if runs := f.builder.backend.lowering.ConvKernel; !f.builder.backend.rules.Disabled && runs != nil &&
		runs(inputShape, kernelShape, axes, strides, paddings, inputDilations, kernelDilations,
			channelGroupCount, batchGroupCount) {
		f.builder.backend.kernelConvs.Add(1)
		return f.Function.ConvGeneral(input, kernel, axes, strides, paddings, inputDilations, kernelDilations,
			channelGroupCount, batchGroupCount)
	}
	if f.builder.backend.rules.Lower(conv) {
		f.builder.backend.lowered.Add(1)
		if f.patches == nil {
			f.patches = patchCache{}
		}
		y, how, err := f.builder.backend.lowering.convGeneral(f.Function, f.patches, input, kernel, axes,
			strides, paddings, inputDilations, kernelDilations, channelGroupCount, batchGroupCount)
		if how.reused {
			f.builder.backend.reusedPatches.Add(1)
		}
		if how.shifted {
			f.builder.backend.shiftedConvs.Add(1)
		}
		if how.shiftTiled {
			f.builder.backend.tiledShifts.Add(1)
		}
		if how.scattered {
			f.builder.backend.scatteredConvs.Add(1)
		}
		return y, err
	}
	return f.Function.ConvGeneral(input, kernel, axes, strides, paddings, inputDilations, kernelDilations,
		channelGroupCount, batchGroupCount)
}

// ReduceWindow implements compute.Function: non-overlapping pooling is
// lowered to a reshape and a reduction when the rules allow, unless it is
// a max or min pooling Lowering.PoolKernel runs faster.
func (f *function) ReduceWindow(x compute.Value, reduction compute.ReduceOpType,
	windowDimensions, strides, inputDilations, windowDilations []int, paddings [][2]int) (compute.Value, error) {
	if (reduction == compute.ReduceOpMax || reduction == compute.ReduceOpMin) &&
		f.poolKernel(x, windowDimensions, strides, inputDilations, windowDilations, paddings) {
		return f.Function.ReduceWindow(x, reduction, windowDimensions, strides, inputDilations, windowDilations, paddings)
	}
	if reduction != compute.ReduceOpProduct &&
		f.lowerPool(x, windowDimensions, strides, inputDilations, windowDilations, paddings) {
		if f.builder.backend.lowering.WholeWindowPooling {
			return LowerReduceWindow(f.Function, x, reduction, windowDimensions)
		}
		return LowerReduceWindowAxes(f.Function, x, reduction, windowDimensions)
	}
	return f.Function.ReduceWindow(x, reduction, windowDimensions, strides, inputDilations, windowDilations, paddings)
}

// SelectAndScatterMax implements compute.Function: the gradient of a
// non-overlapping max-pooling is lowered when the rules allow.
func (f *function) SelectAndScatterMax(operand, source compute.Value, windowDimensions, windowStrides []int,
	paddings [][2]int) (compute.Value, error) {
	if !f.poolKernel(operand, windowDimensions, windowStrides, nil, nil, paddings) &&
		f.lowerPool(operand, windowDimensions, windowStrides, nil, nil, paddings) {
		return f.selectAndScatter(operand, source, windowDimensions, false)
	}
	return f.Function.SelectAndScatterMax(operand, source, windowDimensions, windowStrides, paddings)
}

// SelectAndScatterMin implements compute.Function, as SelectAndScatterMax.
func (f *function) SelectAndScatterMin(operand, source compute.Value, windowDimensions, windowStrides []int,
	paddings [][2]int) (compute.Value, error) {
	if !f.poolKernel(operand, windowDimensions, windowStrides, nil, nil, paddings) &&
		f.lowerPool(operand, windowDimensions, windowStrides, nil, nil, paddings) {
		return f.selectAndScatter(operand, source, windowDimensions, true)
	}
	return f.Function.SelectAndScatterMin(operand, source, windowDimensions, windowStrides, paddings)
}

// selectAndScatter emits a lowered SelectAndScatterMax (Min), one axis at
// a time unless the Lowering says WholeWindowPooling.
func (f *function) selectAndScatter(operand, source compute.Value, windowDimensions []int,
	isMin bool) (compute.Value, error) {
	if f.builder.backend.lowering.WholeWindowPooling {
		return LowerSelectAndScatter(f.Function, operand, source, windowDimensions, isMin)
	}
	return lowerSelectAndScatterAxes(f.Function, operand, source, windowDimensions, isMin,
		!f.builder.backend.lowering.PoolArgMinMax)
}

// lowerPool reports whether a pooling op on x should be lowered, counting
// it when so.
func (f *function) lowerPool(x compute.Value, windowDimensions, strides, inputDilations, windowDilations []int,
	paddings [][2]int) bool {
	rules := f.builder.backend.rules
	if rules.Disabled || rules.KeepPooling {
		return false
	}
	shape, err := f.Function.Shape(x)
	if err != nil || !PoolSupported(shape, windowDimensions, strides, inputDilations, windowDilations, paddings) {
		return false
	}
	f.builder.backend.loweredPools.Add(1)
	return true
}

// poolKernel reports whether a max or min pooling of x (or its gradient)
// is left to the backend because Lowering.PoolKernel runs it faster than
// its lowering, and counts it.
func (f *function) poolKernel(x compute.Value, windowDimensions, strides, inputDilations, windowDilations []int,
	paddings [][2]int) bool {
	b := f.builder.backend
	runs := b.lowering.PoolKernel
	if runs == nil || b.rules.Disabled || b.rules.KeepPooling {
		return false
	}
	shape, err := f.Function.Shape(x)
	if err != nil || shape.IsDynamic() ||
		!runs(shape.DType, shape.Dimensions, windowDimensions, strides, paddings, inputDilations, windowDilations) {
		return false
	}
	b.kernelPools.Add(1)
	return true
}

// BatchNormForTraining implements compute.Function: always lowered (the Go
// backend has none; see LowerBatchNormForTraining), keeping what
// BatchNormGradient can reuse (bnreuse.go).
func (f *function) BatchNormForTraining(operand, scale, offset compute.Value, epsilon float32,
	featureAxis int) (normalized, batchMean, batchVariance compute.Value, err error) {
	f.builder.backend.loweredBatchNorms.Add(1)
	if f.builder.backend.lowering.NoBatchNormReuse {
		return LowerBatchNormForTraining(f.Function, operand, scale, offset, epsilon, featureAxis)
	}
	normalized, batchMean, batchVariance, saved, err := batchNormForTraining(f.Function, operand, scale, offset,
		epsilon, featureAxis)
	if err == nil && saved != nil {
		if f.batchNorms == nil {
			f.batchNorms = bnCache{}
		}
		f.batchNorms[bnKey{operand, batchMean, batchVariance, epsilon,
			normalizeAxis(f.Function, operand, featureAxis)}] = saved
	}
	return normalized, batchMean, batchVariance, err
}

// BatchNormForInference implements compute.Function: always lowered.
func (f *function) BatchNormForInference(operand, scale, offset, mean, variance compute.Value, epsilon float32,
	featureAxis int) (compute.Value, error) {
	f.builder.backend.loweredBatchNorms.Add(1)
	return LowerBatchNormForInference(f.Function, operand, scale, offset, mean, variance, epsilon, featureAxis)
}

// BatchNormGradient implements compute.Function: always lowered, from the
// forward's centered operand when this function lowered it (bnreuse.go).
func (f *function) BatchNormGradient(operand, scale, mean, variance, gradOutput compute.Value, epsilon float32,
	featureAxis int) (gradOperand, gradScale, gradOffset compute.Value, err error) {
	f.builder.backend.loweredBatchNorms.Add(1)
	if f.builder.backend.lowering.NoBatchNormReuse {
		return batchNormGradientXHat(f.Function, operand, scale, mean, variance, gradOutput, epsilon, featureAxis)
	}
	saved := f.batchNorms[bnKey{operand, mean, variance, epsilon, normalizeAxis(f.Function, operand, featureAxis)}]
	if saved != nil {
		f.builder.backend.reusedBatchNorms.Add(1)
	}
	return batchNormGradient(f.Function, operand, scale, mean, variance, gradOutput, epsilon, featureAxis, saved)
}
