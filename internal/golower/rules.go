package golower

import (
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapeinference"
	"github.com/gomlx/compute/shapes"
)

// Conv describes one ConvGeneral call, as the backend receives it.
type Conv struct {
	Input, Kernel                      shapes.Shape
	Axes                               compute.ConvolveAxesConfig
	Strides                            []int
	Paddings                           [][2]int
	InputDilations, KernelDilations    []int
	ChannelGroupCount, BatchGroupCount int
}

// MultiplyAdds returns the multiply-adds of the convolution (the size of
// its output times the kernel window times the input channels per group),
// or -1 when the shapes are invalid.
func (c Conv) MultiplyAdds() int {
	out, err := c.OutputShape()
	if err != nil {
		return -1
	}
	window := 1
	for _, axis := range c.Axes.KernelSpatial {
		window *= c.Kernel.Dimensions[axis]
	}
	return out.Size() * window * c.Kernel.Dimensions[c.Axes.KernelInputChannels]
}

// Rules decide, per convolution, between Lowering and the backend's own
// convolution. The defaults come from BenchmarkConvRules (forward and both
// gradients, CPU time, on the 2-core CI machine with AVX-512):
//
//   - below about 2K multiply-adds the two are within noise of each other
//     (the executable's fixed cost dominates), so the direct loop is kept;
//     from 5K up the lowering wins (1.7× at 5K, 8× at 113K, 11–16× at
//     1.8M–143M);
//   - grouped convolutions with fewer than 4 input channels per group
//     (depthwise: 1) are faster direct (lowered 1.8× slower at 1 and 2
//     channels per group, 4.8× faster at 4, 4.3× at 8): each group's matmul
//     is too thin.
//
// Batch grouping, integer and half-precision dtypes and dynamic shapes are
// never lowered (see Supports).
type Rules struct {
	// MinMultiplyAdds is the size (Conv.MultiplyAdds) below which the
	// backend's direct loop is kept.
	MinMultiplyAdds int
	// MinGroupChannels is the number of input channels per group below
	// which a grouped convolution (ChannelGroupCount > 1) keeps the direct
	// loop.
	MinGroupChannels int
	// KeepPooling keeps the backend's own pooling (ReduceWindow) and its
	// gradient (SelectAndScatter) even where they could be lowered.
	KeepPooling bool
	// Disabled keeps the backend's convolution and pooling everywhere.
	Disabled bool
}

// DefaultRules are the measured defaults (see Rules).
func DefaultRules() Rules { return Rules{MinMultiplyAdds: 2048, MinGroupChannels: 4} }

// Lower reports whether conv should be lowered onto DotGeneral.
func (r Rules) Lower(conv Conv) bool {
	if r.Disabled || !Supports(conv.Input, conv.Kernel, conv.BatchGroupCount) {
		return false
	}
	if groups := max(conv.ChannelGroupCount, 1); groups > 1 &&
		conv.Input.Dimensions[conv.Axes.InputChannels]/groups < r.MinGroupChannels {
		return false
	}
	return conv.MultiplyAdds() >= r.MinMultiplyAdds
}

// OutputShape returns the shape of the convolution's result.
func (c Conv) OutputShape() (shapes.Shape, error) {
	return shapeinference.ConvGeneral(c.Input, c.Kernel, c.Axes, c.Strides, c.Paddings, c.InputDilations,
		c.KernelDilations, max(c.ChannelGroupCount, 1), max(c.BatchGroupCount, 1))
}
