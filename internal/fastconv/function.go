package fastconv

import (
	"github.com/gomlx/compute"
)

// function wraps a backend function: ConvGeneral may be lowered, functions
// passed in or out are unwrapped or wrapped, all other ops are the inner
// function's.
type function struct {
	compute.Function
	builder *builder
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

// ConvGeneral implements compute.Function: lowered onto DotGeneral when the
// backend's rules choose it, else the inner backend's convolution.
func (f *function) ConvGeneral(input, kernel compute.Value, axes compute.ConvolveAxesConfig,
	strides []int, paddings [][2]int, inputDilations, kernelDilations []int,
	channelGroupCount, batchGroupCount int) (compute.Value, error) {
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
	if f.builder.backend.rules.Lower(conv) {
		f.builder.backend.lowered.Add(1)
		return f.builder.backend.lowering.ConvGeneral(f.Function, input, kernel, axes, strides, paddings,
			inputDilations, kernelDilations, channelGroupCount, batchGroupCount)
	}
	return f.Function.ConvGeneral(input, kernel, axes, strides, paddings, inputDilations, kernelDilations,
		channelGroupCount, batchGroupCount)
}
