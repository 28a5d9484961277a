package fastconv

import (
	"github.com/gomlx/compute"
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
// convolution.
type Rules struct {
	// MinMultiplyAdds is the size below which the backend's direct loop is
	// kept: for tiny convolutions the extra ops of the lowering cost more
	// than they save.
	MinMultiplyAdds int
	// KeepPooling keeps the backend's own pooling (ReduceWindow) and its
	// gradient (SelectAndScatter) even where they could be lowered.
	KeepPooling bool
	// Disabled keeps the backend's convolution and pooling everywhere.
	Disabled bool
}

// DefaultRules are the measured defaults (see the package documentation).
func DefaultRules() Rules { return Rules{MinMultiplyAdds: 0} }

// Lower reports whether conv should be lowered onto DotGeneral.
func (r Rules) Lower(conv Conv) bool {
	if r.Disabled || !Supports(conv.Input, conv.Kernel, conv.BatchGroupCount) {
		return false
	}
	return conv.MultiplyAdds() >= r.MinMultiplyAdds
}
