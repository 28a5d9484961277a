package nn

import (
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
)

// ConvBuilder configures a torch.nn.Conv1d or Conv2d: Conv1d or Conv2d
// starts it, Done applies it.
type ConvBuilder struct {
	layer                   string
	scope                   *model.Scope
	x                       *graph.Node
	out                     int
	kernel, stride, padding []int
	dilation                []int
	groups                  int
	bias                    bool
}

// Conv2d is torch.nn.Conv2d(in_channels, out, kernel_size) on x [N, C, H,
// W] (in_channels is C): weight [out, C/groups, kH, kW] and bias [out] in
// scope (torch's names, so "conv1" loads torch's conv1.weight and
// conv1.bias), initialised as torch does (U(±1/√fan_in), fan_in =
// C/groups·kH·kW). kernel is one size or (kH, kW). The defaults are
// torch's: stride 1, padding 0, dilation 1, groups 1, with bias.
func Conv2d(scope *model.Scope, x *graph.Node, out int, kernel ...int) *ConvBuilder {
	return newConv("nn.Conv2d", 2, scope, x, out, kernel)
}

// Conv1d is torch.nn.Conv1d(in_channels, out, kernel_size) on x [N, C,
// L]: weight [out, C/groups, k] and bias [out], as Conv2d.
func Conv1d(scope *model.Scope, x *graph.Node, out, kernel int) *ConvBuilder {
	return newConv("nn.Conv1d", 1, scope, x, out, []int{kernel})
}

func newConv(layer string, spatial int, scope *model.Scope, x *graph.Node, out int, kernel []int) *ConvBuilder {
	if x.Rank() != spatial+2 {
		panic(fmt.Sprintf("%s: x must be [N, C%s], got %s", layer, map[int]string{1: ", L", 2: ", H, W"}[spatial], x.Shape()))
	}
	if out < 1 {
		panic(fmt.Sprintf("%s: out channels must be positive, got %d", layer, out))
	}
	return &ConvBuilder{layer: layer, scope: scope, x: x, out: out, kernel: perAxis(layer, "kernel_size", kernel, spatial),
		stride: slices.Repeat([]int{1}, spatial), padding: make([]int, spatial), dilation: slices.Repeat([]int{1}, spatial),
		groups: 1, bias: true}
}

// Stride is torch's stride= (one value, or one per spatial axis).
func (c *ConvBuilder) Stride(stride ...int) *ConvBuilder {
	c.stride = perAxis(c.layer, "stride", stride, len(c.kernel))
	return c
}

// Padding is torch's padding= (zeros on both sides of each spatial axis).
func (c *ConvBuilder) Padding(padding ...int) *ConvBuilder {
	c.padding = perAxis(c.layer, "padding", padding, len(c.kernel))
	return c
}

// Dilation is torch's dilation=.
func (c *ConvBuilder) Dilation(dilation ...int) *ConvBuilder {
	c.dilation = perAxis(c.layer, "dilation", dilation, len(c.kernel))
	return c
}

// Groups is torch's groups=: in and out channels split into groups
// convolved separately; both must divide by it.
func (c *ConvBuilder) Groups(groups int) *ConvBuilder {
	c.groups = groups
	return c
}

// NoBias is torch's bias=False.
func (c *ConvBuilder) NoBias() *ConvBuilder {
	c.bias = false
	return c
}

// Done creates (or reuses) the variables and returns the convolution
// [N, out, spatial…].
func (c *ConvBuilder) Done() *graph.Node {
	in := c.x.Shape().Dim(1)
	if c.groups < 1 || in%c.groups != 0 || c.out%c.groups != 0 {
		panic(fmt.Sprintf("%s: groups %d must divide in channels %d and out channels %d", c.layer, c.groups, in, c.out))
	}
	for _, v := range slices.Concat(c.kernel, c.stride, c.dilation) {
		if v < 1 {
			panic(fmt.Sprintf("%s: kernel_size, stride and dilation must be positive, got %v (kernel %v, stride %v, dilation %v)", c.layer, v, c.kernel, c.stride, c.dilation))
		}
	}
	fanIn := in / c.groups
	for _, k := range c.kernel {
		fanIn *= k
	}
	g, dtype, spatial := c.x.Graph(), c.x.DType(), len(c.kernel)
	weight := param(c.scope, c.layer, "weight", dtype, fanInInit(c.scope, fanIn), append([]int{c.out, in / c.groups}, c.kernel...)...).NodeValue(g)
	axes := graph.ConvolveAxesConfig{
		InputBatch: 0, InputChannels: 1, InputSpatial: iota2(spatial),
		KernelOutputChannels: 0, KernelInputChannels: 1, KernelSpatial: iota2(spatial),
		OutputBatch: 0, OutputChannels: 1, OutputSpatial: iota2(spatial),
	}
	paddings := make([][2]int, spatial)
	for i, p := range c.padding {
		paddings[i] = [2]int{p, p}
	}
	y := graph.ConvGeneral(c.x, weight, axes, c.stride, paddings, nil, c.dilation, c.groups, 1)
	if c.bias {
		bias := param(c.scope, c.layer, "bias", dtype, fanInInit(c.scope, fanIn), c.out).NodeValue(g)
		y = graph.Add(y, graph.ExpandAxes(bias, append([]int{0}, iota2(spatial)...)...))
	}
	return y
}

// iota2 is [2, 3, …, 2+n−1], the spatial axes of a channels-first tensor.
func iota2(n int) []int {
	axes := make([]int, n)
	for i := range axes {
		axes[i] = 2 + i
	}
	return axes
}
