// Package convgrad corrects GoMLX v0.28.16's gradient of a convolution
// with respect to its input when a kernel's effective size is even.
//
// GoMLX differentiates a ConvGeneral node by a "reverse" convolution of the
// output gradient with the spatially reversed kernel (convVJPWrtX in
// core/graph/ops_convolve.go). That is the transposed convolution, which
// needs K−1−p of padding before the first position of each spatial axis (K
// the kernel's effective size (k−1)·dilation+1, p the forward padding
// there) and (I−1)·d+1−1+p−(O−1)·s after the last (I the input size, d its
// input dilation, O the output size, s the stride). GoMLX pads
// 2·⌊(K−1)/2⌋−p before and one more after: right for odd K, one position
// off for every even K (2×2, DCGAN's 4×4), so every layer behind such a
// convolution trained on a shifted gradient.
//
// Importing the package (volt's engine does) replaces the ConvGeneral entry
// of GoMLX's graph.VJPRegistration, a table GoMLX exports for this: the
// replacement keeps GoMLX's gradient graph for convolutions whose kernels
// are odd on every spatial axis (their graph is unchanged, so bit for bit
// the same) and builds both gradients of the others: the input's with the
// padding above, the kernel's as GoMLX does (it is right, but GoMLX builds
// the two in one function). The same holds where the transposed
// convolution needs a negative padding (a forward padding beyond the
// kernel's span, e.g. a 3×3 kernel padded by 3), which GoMLX's gradient
// refuses to build ("failed to set up reverse Convolve() for gradient"). The table is
// process-wide, so programs that import volt get the corrected gradient in
// their own GoMLX graphs too.
//
// The node's parameters (strides, paddings, dilations, groups) are fields
// GoMLX does not export; the package reads them by reflection and uses
// them only if they reproduce the node's output shape. If a GoMLX version
// lays them out differently, GoMLX's own gradient stays in place, a warning
// says so once on standard error, and TestGradientsAreAdjoints fails in
// volt's CI, which checks both gradients against the forward convolution
// alone.
package convgrad

import (
	"fmt"
	"os"
	"sync"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
)

// installed records whether init replaced GoMLX's VJP.
var installed bool

// warnUnreadable says once that a convolution's parameters could not be
// read, so its gradient is GoMLX's.
var warnUnreadable = sync.OnceFunc(func() {
	fmt.Fprintln(os.Stderr, "volt: cannot read a GoMLX convolution's parameters (a GoMLX version other than "+
		"v0.28.16?); its input gradient is GoMLX's own, which v0.28.16 gets wrong for even kernel sizes")
})

func init() {
	gomlxVJP, ok := graph.VJPRegistration[graph.NodeTypeConvGeneral]
	if !ok {
		return
	}
	graph.VJPRegistration[graph.NodeTypeConvGeneral] = func(node *graph.Node, vjpOutputs []*graph.Node, outputShape shapes.Shape) []*graph.Node {
		p, ok := readParams(node)
		if !ok {
			warnUnreadable()
			return gomlxVJP(node, vjpOutputs, outputShape)
		}
		x, kernel, v := node.Inputs()[0], node.Inputs()[1], vjpOutputs[0]
		if !p.needsCorrection(x, kernel, v) {
			return gomlxVJP(node, vjpOutputs, outputShape)
		}
		return []*graph.Node{inputGradient(x, kernel, v, p), kernelGradient(x, kernel, v, p)}
	}
	installed = true
}

// Installed reports whether the corrected gradient replaced GoMLX's.
func Installed() bool { return installed }

// needsCorrection reports whether GoMLX's gradient of the convolution is
// wrong or fails to build: an even effective kernel size, or a negative
// padding of its transposed convolution, on some spatial axis.
func (p convParams) needsCorrection(x, kernel, v *graph.Node) bool {
	if p.hasEvenKernel(kernel.Shape().Dimensions) {
		return true
	}
	for _, pad := range p.transposedPaddings(x, kernel, v) {
		if pad[0] < 0 || pad[1] < 0 {
			return true
		}
	}
	return false
}

// inputGradient is the gradient of the convolution node with parameters p,
// input x and kernel kernel, with respect to x, given the output gradient
// v; channel and batch groups split it as GoMLX's gradient does.
func inputGradient(x, kernel, v *graph.Node, p convParams) *graph.Node {
	return perGroup(x, kernel, v, p, ungroupedInputGradient, false)
}

// perGroup applies gradient to each channel or batch group of the
// convolution (x, v and the kernel split as GoMLX's gradient splits them)
// and concatenates the results: on x's grouped axis for the input's
// gradient, on the kernel's output channels for the kernel's.
func perGroup(x, kernel, v *graph.Node, p convParams, gradient func(x, kernel, v *graph.Node, p convParams) *graph.Node, ofKernel bool) *graph.Node {
	a := p.axes
	groups, xAxis := 1, a.InputChannels
	switch {
	case p.channelGroups > 1:
		groups = p.channelGroups
	case p.batchGroups > 1:
		groups, xAxis = p.batchGroups, a.InputBatch
	}
	if groups == 1 {
		return gradient(x, kernel, v, p)
	}
	vs := graph.Split(v, a.OutputChannels, groups)
	xs := graph.Split(x, xAxis, groups)
	ks := graph.Split(kernel, a.KernelOutputChannels, groups)
	parts := make([]*graph.Node, groups)
	for i := range parts {
		parts[i] = gradient(xs[i], ks[i], vs[i], p)
	}
	if ofKernel {
		return graph.Concatenate(parts, a.KernelOutputChannels)
	}
	return graph.Concatenate(parts, xAxis)
}

// ungroupedInputGradient is the transposed convolution of v by kernel: the
// output gradient, dilated by the strides and padded as the package doc
// says, convolved with the spatially reversed kernel whose input and output
// channels swap roles; an input dilation of the forward convolution keeps
// every d-th position of the result.
func ungroupedInputGradient(x, kernel, v *graph.Node, p convParams) *graph.Node {
	a := p.axes
	reversed := graph.Reverse(kernel, a.KernelSpatial...)
	var back graph.ConvolveAxesConfig
	back.InputBatch, back.InputChannels, back.InputSpatial = a.OutputBatch, a.OutputChannels, a.OutputSpatial
	back.OutputBatch, back.OutputChannels, back.OutputSpatial = a.InputBatch, a.InputChannels, a.InputSpatial
	back.KernelInputChannels, back.KernelOutputChannels = a.KernelOutputChannels, a.KernelInputChannels
	back.KernelSpatial = a.KernelSpatial
	g := graph.ConvGeneral(v, reversed, back, nil, p.transposedPaddings(x, kernel, v), p.strides, p.kernelDilations, 1, 1)
	for i, axis := range a.InputSpatial {
		if d := p.inputDilation(i); d != 1 {
			g = graph.SliceAxis(g, axis, graph.AxisRange().Stride(d))
		}
	}
	return g
}

// transposedPaddings are the paddings of the transposed convolution of v
// (the output gradient, dilated by the strides) by the reversed kernel
// that give the input's (dilated) size: K−1−p before, (I−1)+p−(O−1)·s
// after, K and I the effective kernel and input sizes.
func (p convParams) transposedPaddings(x, kernel, v *graph.Node) [][2]int {
	a := p.axes
	paddings := make([][2]int, len(a.InputSpatial))
	for i := range paddings {
		k := effectiveSize(kernel.Shape().Dimensions[a.KernelSpatial[i]], p.kernelDilation(i))
		in := effectiveSize(x.Shape().Dimensions[a.InputSpatial[i]], p.inputDilation(i))
		out := v.Shape().Dimensions[a.OutputSpatial[i]]
		pad := p.padding(i)
		paddings[i] = [2]int{k - 1 - pad[0], in - 1 + pad[0] - (out-1)*p.stride(i)}
	}
	return paddings
}

// effectiveSize is the span of size positions spread dilation apart.
func effectiveSize(size, dilation int) int { return (size-1)*dilation + 1 }
