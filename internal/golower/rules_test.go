package golower

import (
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
)

// nhwc returns the Conv of a channels-last 2D convolution.
func nhwc(dtype dtypes.DType, batch, size, in, out, kernel, groups, batchGroups int) Conv {
	return Conv{
		Input:  shapes.Make(dtype, batch, size, size, in),
		Kernel: shapes.Make(dtype, kernel, kernel, in/groups, out),
		Axes: compute.ConvolveAxesConfig{
			InputBatch: 0, InputSpatial: []int{1, 2}, InputChannels: 3,
			KernelSpatial: []int{0, 1}, KernelInputChannels: 2, KernelOutputChannels: 3,
			OutputBatch: 0, OutputSpatial: []int{1, 2}, OutputChannels: 3,
		},
		ChannelGroupCount: groups, BatchGroupCount: batchGroups,
	}
}

func TestDefaultRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		conv  Conv
		lower bool
	}{
		{"MNIST conv 2", nhwc(dtypes.Float32, 64, 13, 32, 64, 3, 1, 1), true},
		{"float64", nhwc(dtypes.Float64, 64, 13, 32, 64, 3, 1, 1), true},
		{"tiny: 6×6, 1 channel", nhwc(dtypes.Float32, 1, 6, 1, 1, 3, 1, 1), false},
		{"small: 8×8, 4 channels", nhwc(dtypes.Float32, 1, 8, 4, 4, 3, 1, 1), true},
		{"depthwise", nhwc(dtypes.Float32, 8, 16, 32, 32, 3, 32, 1), false},
		{"2 channels per group", nhwc(dtypes.Float32, 8, 16, 32, 32, 3, 16, 1), false},
		{"4 channels per group", nhwc(dtypes.Float32, 8, 16, 32, 32, 3, 8, 1), true},
		{"batch groups", nhwc(dtypes.Float32, 8, 16, 32, 64, 3, 1, 2), false},
		{"float16", nhwc(dtypes.Float16, 64, 13, 32, 64, 3, 1, 1), false},
		{"int32", nhwc(dtypes.Int32, 64, 13, 32, 64, 3, 1, 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DefaultRules().Lower(tc.conv); got != tc.lower {
				t.Errorf("DefaultRules().Lower = %v, want %v (%d multiply-adds)", got, tc.lower, tc.conv.MultiplyAdds())
			}
		})
	}
	if (Rules{Disabled: true}).Lower(nhwc(dtypes.Float32, 64, 13, 32, 64, 3, 1, 1)) {
		t.Error("disabled rules lower a convolution")
	}
}
