package convgrad

import "github.com/gomlx/gomlx/core/graph"

// kernelGradient is the gradient of the convolution with parameters p,
// input x and kernel kernel, with respect to the kernel, given the output
// gradient v: GoMLX v0.28.16's (convGeneralVJP's kernel half, Apache-2.0),
// which is right (TestGradientsAreAdjoints), rebuilt here because GoMLX
// computes it in one function with the input gradient, which fails to
// build for some of the convolutions this package handles.
func kernelGradient(x, kernel, v *graph.Node, p convParams) *graph.Node {
	return perGroup(x, kernel, v, p, ungroupedKernelGradient, true)
}

// ungroupedKernelGradient convolves the input with the output gradient as
// its kernel: batch and input channels swap roles (the batch is summed),
// the forward strides become the kernel dilations and the forward kernel
// dilations the strides, and the end padding grows until the result has
// the kernel's size (GoMLX's convVJPWrtKernel).
func ungroupedKernelGradient(x, kernel, v *graph.Node, p convParams) *graph.Node {
	a := p.axes
	var back graph.ConvolveAxesConfig
	back.InputBatch, back.InputChannels, back.InputSpatial = a.InputChannels, a.InputBatch, a.InputSpatial
	back.OutputBatch, back.OutputChannels, back.OutputSpatial = a.KernelInputChannels, a.KernelOutputChannels, a.KernelSpatial
	back.KernelInputChannels, back.KernelOutputChannels, back.KernelSpatial = a.OutputBatch, a.OutputChannels, a.OutputSpatial
	spatial := len(a.InputSpatial)
	paddings := make([][2]int, spatial)
	for i := range spatial {
		k := kernel.Shape().Dimensions[a.KernelSpatial[i]]
		in := effectiveSize(x.Shape().Dimensions[a.InputSpatial[i]], p.inputDilation(i))
		out := v.Shape().Dimensions[a.OutputSpatial[i]]
		paddings[i] = p.padding(i)
		// The result's size with the forward padding: output positions
		// spread stride apart, stepping by the kernel dilation.
		got := outputSize(in, out, p.stride(i), p.kernelDilation(i), paddings[i])
		paddings[i][1] += (k - got) * p.kernelDilation(i)
	}
	return graph.ConvGeneral(x, v, back, p.kernelDilations, paddings, p.inputDilations, p.strides, 1, 1)
}

// outputSize is the length of a convolution of an input of size in
// (padded by padding) by a kernel of size kernel spread dilation apart,
// with the given stride: GoMLX's expectedOutputSize.
func outputSize(in, kernel, dilation, stride int, padding [2]int) int {
	span := effectiveSize(kernel, dilation)
	start := (span-1)/2 - padding[0]
	end := in - span/2 + padding[1]
	return (end - start + stride - 1) / stride
}
