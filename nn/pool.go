package nn

import (
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/core/graph"
	timage "github.com/gomlx/gomlx/core/tensors/images"
)

// PoolBuilder configures a torch.nn.MaxPool2d or AvgPool2d: MaxPool2d or
// AvgPool2d starts it, Done applies it.
type PoolBuilder struct {
	layer                   string
	x                       *graph.Node
	kernel, stride, padding []int
	countIncludePad         bool
}

// MaxPool2d is torch.nn.MaxPool2d(kernel_size) on x [N, C, H, W]: the
// maximum of each window, stride kernel_size and padding 0 by default
// (padded positions never win, as torch's -inf). kernel is one size or
// (kH, kW). Dilation and ceil_mode are not supported.
func MaxPool2d(x *graph.Node, kernel ...int) *PoolBuilder {
	return newPool("nn.MaxPool2d", x, kernel)
}

// AvgPool2d is torch.nn.AvgPool2d(kernel_size) on x [N, C, H, W]: the
// mean of each window, stride kernel_size, padding 0, and padded zeros
// counted in the mean (count_include_pad=True) by default. ceil_mode and
// divisor_override are not supported.
func AvgPool2d(x *graph.Node, kernel ...int) *PoolBuilder {
	return newPool("nn.AvgPool2d", x, kernel)
}

func newPool(layer string, x *graph.Node, kernel []int) *PoolBuilder {
	if x.Rank() != 4 {
		panic(fmt.Sprintf("%s: x must be [N, C, H, W], got %s", layer, x.Shape()))
	}
	k := perAxis(layer, "kernel_size", kernel, 2)
	return &PoolBuilder{layer: layer, x: x, kernel: k, stride: slices.Clone(k), padding: []int{0, 0}, countIncludePad: true}
}

// Stride is torch's stride= (kernel_size by default).
func (p *PoolBuilder) Stride(stride ...int) *PoolBuilder {
	p.stride = perAxis(p.layer, "stride", stride, 2)
	return p
}

// Padding is torch's padding= (at most half the kernel size, as torch
// requires).
func (p *PoolBuilder) Padding(padding ...int) *PoolBuilder {
	p.padding = perAxis(p.layer, "padding", padding, 2)
	return p
}

// CountIncludePad is AvgPool2d's count_include_pad= (true by default):
// false divides each window's sum by its positions inside the input.
func (p *PoolBuilder) CountIncludePad(include bool) *PoolBuilder {
	if p.layer != "nn.AvgPool2d" {
		panic(p.layer + ": CountIncludePad is AvgPool2d's option")
	}
	p.countIncludePad = include
	return p
}

// Done returns the pooled x [N, C, H', W'].
func (p *PoolBuilder) Done() *graph.Node {
	paddings := make([][2]int, 2)
	for i, pad := range p.padding {
		if pad < 0 || 2*pad > p.kernel[i] || p.kernel[i] < 1 || p.stride[i] < 1 {
			panic(fmt.Sprintf("%s: kernel_size %v and stride %v must be positive and padding %v at most half the kernel size", p.layer, p.kernel, p.stride, p.padding))
		}
		paddings[i] = [2]int{pad, pad}
	}
	configure := func(b *graph.PoolBuilder) *graph.Node {
		return b.ChannelsAxis(timage.ChannelsFirst).WindowPerAxis(p.kernel...).StridePerAxis(p.stride...).PaddingPerDim(paddings).Done()
	}
	if p.layer == "nn.MaxPool2d" {
		return configure(graph.MaxPool(p.x))
	}
	sum := configure(graph.SumPool(p.x))
	if p.countIncludePad {
		return graph.DivScalar(sum, float64(p.kernel[0]*p.kernel[1]))
	}
	ones := graph.OnesLike(graph.Slice(p.x, graph.AxisElem(0), graph.AxisElem(0))) // [1, 1, H, W]
	return graph.Div(sum, graph.StopGradient(configure(graph.SumPool(ones))))
}

// AdaptiveAvgPool2d is torch.nn.AdaptiveAvgPool2d((outH, outW)) on x [N,
// C, H, W]: output cell (i, j) is the mean of rows ⌊i·H/outH⌋ to
// ⌈(i+1)·H/outH⌉ and the same columns of W, torch's windows (so (1, 1)
// is the global average pool of ResNet's head).
func AdaptiveAvgPool2d(x *graph.Node, outH, outW int) *graph.Node {
	if x.Rank() != 4 || outH < 1 || outW < 1 {
		panic(fmt.Sprintf("nn.AdaptiveAvgPool2d: x must be [N, C, H, W] and the output size positive, got %s and (%d, %d)", x.Shape(), outH, outW))
	}
	h := adaptiveWeights(x, x.Shape().Dim(2), outH) // [outH, H]
	w := adaptiveWeights(x, x.Shape().Dim(3), outW) // [outW, W]
	// y[n, c, i, j] = Σ_hw h[i, h]·x[n, c, h, w]·w[j, w]
	y := graph.DotGeneral(x, []int{3}, nil, w, []int{1}, nil) // [N, C, H, outW]
	y = graph.DotGeneral(y, []int{2}, nil, h, []int{1}, nil)  // [N, C, outW, outH]
	return graph.TransposeAllAxes(y, 0, 1, 3, 2)              // [N, C, outH, outW]
}

// adaptiveWeights is the [out, in] matrix averaging torch's adaptive
// windows of an axis of size in.
func adaptiveWeights(x *graph.Node, in, out int) *graph.Node {
	weights := make([]float64, out*in)
	for i := range out {
		start, end := i*in/out, ((i+1)*in+out-1)/out
		for k := start; k < end; k++ {
			weights[i*in+k] = 1 / float64(end-start)
		}
	}
	return graph.ConvertDType(graph.Const(x.Graph(), tensorOf(weights, out, in)), x.DType())
}
