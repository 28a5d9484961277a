package golower

import (
	"fmt"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
)

// "Full" convolutions by multiplying first and summing shifted products.
//
// GoMLX's gradient of a stride-1 valid convolution with respect to its
// input is a convolution of the output gradient padded by the kernel's
// span less one on both sides (a "full" convolution), with the reversed
// kernel (for even spans too since internal/convgrad corrects GoMLX's
// padding of those). Its padded grid is much larger than its output at small sizes
// (15×15 against 13×13 for the CNN's second convolution), so shiftConv
// declines it and gatherTimesKernel gathers a patch matrix of K·C columns
// per output position (6.2M values for the CNN), which the matmul then
// packs again.
//
// Such a convolution can be computed the other way round: multiply first,
// z[k, co, i] = Σ_c w[k, c, co] · x[c, i] for every input position i and
// kernel position k, then y[co, o] = Σ_k z[k, co, o + k·d − lo]. With the
// input on the output's grid (x zero-padded at the end of each spatial
// axis to the output's size, one zero image in front), and channels
// first, each term of the sum is one contiguous run of z shifted by the
// flat offset of k·d − lo: the positions it reads past an axis's start
// fall on the zero padding of the previous row or image because the
// padding on each side is at least the span less one. So
//
//	z[K·Co, (N+1)·G] = w[K·Co, C] · x[C, (N+1)·G]    (G = ∏ output sizes)
//	y[Co, N·G]       = Σ_k z[k, :, G + s_k : G + s_k + N·G]
//
// is one DotGeneral whose large operand is the (small) input, one Gather
// of K·Co contiguous runs and a leading-axis ReduceSum. It moves K·Co·G
// values per image where the patch matrix has K·C·O and the shifted runs
// K·C·P (P the padded grid); it is chosen when Co·G ≤ C·P.

// scatterConv emits a full-padded convolution as above, or returns
// ok=false when it does not apply: channel groups, strides or input
// dilations other than 1, a padding below the kernel's span less one, a
// kernel of one position,
// Co·G > C·P, or products larger than maxPatchBytes.
func (b *emitter) scatterConv(input, kernel compute.Value, inputShape, kernelShape, outputShape shapes.Shape,
	axes compute.ConvolveAxesConfig, strides []int, paddings [][2]int, inputDilations, kernelDilations []int,
	groups int) (y compute.Value, ok bool, err error) {
	n := len(axes.InputSpatial)
	if groups != 1 || n == 0 || len(paddings) == 0 {
		return nil, false, nil
	}
	strides, inputDilations, kernelDilations = perAxis(strides, n), perAxis(inputDilations, n), perAxis(kernelDilations, n)
	batch := inputShape.Dimensions[axes.InputBatch]
	c := inputShape.Dimensions[axes.InputChannels]
	co := kernelShape.Dimensions[axes.KernelOutputChannels]
	kernelSize := make([]int, n)
	inSpatial := make([]int, n)
	outSpatial := make([]int, n)
	padAxes := make([]compute.PadAxis, n+2)
	padAxes[1] = compute.PadAxis{Start: 1} // the zero image in front
	padded := 1                            // P: the padded input grid
	wide := false                          // a kernel axis spans more than one position
	for i := range n {
		kernelSize[i] = kernelShape.Dimensions[axes.KernelSpatial[i]]
		span := (kernelSize[i]-1)*kernelDilations[i] + 1
		p := paddings[i]
		if strides[i] != 1 || inputDilations[i] != 1 || p[0] < span-1 || p[1] < span-1 {
			return nil, false, nil
		}
		inSpatial[i] = inputShape.Dimensions[axes.InputSpatial[i]]
		outSpatial[i] = outputShape.Dimensions[axes.OutputSpatial[i]]
		padAxes[2+i] = compute.PadAxis{End: outSpatial[i] - inSpatial[i]}
		padded *= inSpatial[i] + p[0] + p[1]
		wide = wide || span > 1
	}
	if !wide { // a pointwise convolution: the other paths keep its patches for the kernel gradient
		return nil, false, nil
	}
	grid := prod(outSpatial) // G
	numKernel := prod(kernelSize)
	if co*grid > c*padded || numKernel*co*(batch+1)*grid*b.dtype.Size() > b.maxPatchBytes {
		return nil, false, nil
	}

	// x as [C, N+1, O...] (zero image in front, zero-padded to the output
	// grid), flattened to [C, (N+1)·G].
	x, err := b.channelsFirstPadded(input, inputShape.Dimensions, axes, padAxes, c, (batch+1)*grid)
	if err != nil {
		return nil, false, err
	}
	// The kernel as [K·Co, C], kernel positions outermost.
	w, err := fastTranspose(b.f, kernel, kernelShape.Dimensions,
		append(append([]int{}, axes.KernelSpatial...), axes.KernelOutputChannels, axes.KernelInputChannels))
	if err != nil {
		return nil, false, err
	}
	if w, err = b.f.Reshape(w, numKernel*co, c); err != nil {
		return nil, false, err
	}
	z, err := b.f.DotGeneral(w, []int{1}, nil, x, []int{0}, nil, compute.DotGeneralConfig{})
	if err != nil {
		return nil, false, err
	}
	if z, err = b.f.Reshape(z, numKernel, co, (batch+1)*grid); err != nil {
		return nil, false, err
	}
	// One start (k, G + s_k) per kernel position, s_k = Σ (k_i·d_i − lo_i)·stride_i ≤ 0.
	starts := make([]int32, 0, 2*numKernel)
	pos := make([]int, n)
	for k := range numKernel {
		s, stride := 0, 1
		for i := n - 1; i >= 0; i-- {
			s += (pos[i]*kernelDilations[i] - paddings[i][0]) * stride
			stride *= outSpatial[i]
		}
		starts = append(starts, int32(k), int32(grid+s))
		for i := n - 1; i >= 0; i-- {
			pos[i]++
			if pos[i] < kernelSize[i] {
				break
			}
			pos[i] = 0
		}
	}
	startIndices, err := b.f.Constant(starts, numKernel, 2)
	if err != nil {
		return nil, false, err
	}
	terms, err := b.f.Gather(z, startIndices, 1, []int{1, 2}, []int{0}, []int{0, 2}, []int{1, co, batch * grid},
		true)
	if err != nil {
		return nil, false, err
	}
	if y, err = b.f.ReduceSum(terms, 0); err != nil {
		return nil, false, err
	}
	// [Co, N·G] to the output layout.
	dims := append([]int{co, batch}, outSpatial...)
	if y, err = b.f.Reshape(y, dims...); err != nil {
		return nil, false, err
	}
	outPerm := make([]int, n+2)
	outPerm[axes.OutputChannels] = 0
	outPerm[axes.OutputBatch] = 1
	for i, axis := range axes.OutputSpatial {
		outPerm[axis] = 2 + i
	}
	if y, err = fastTranspose(b.f, y, dims, outPerm); err != nil {
		return nil, false, err
	}
	if got, err := b.f.Shape(y); err != nil || !got.Equal(outputShape) {
		return nil, false, fmt.Errorf("golower: scattered convolution has shape %s, want %s (err=%v)", got,
			outputShape, err)
	}
	return y, true, nil
}
