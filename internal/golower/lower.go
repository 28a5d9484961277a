package golower

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapeinference"
	"github.com/gomlx/compute/shapes"
)

// DefaultMaxPatchBytes bounds the patch (im2col) matrix of one DotGeneral
// when a Lowering leaves MaxPatchBytes at zero: larger convolutions are cut
// into tiles along the batch axis and then along the first output spatial
// axis, and the tiles' outputs are concatenated.
const DefaultMaxPatchBytes = 64 << 20

// Lowering emits a convolution as patch extraction (one Gather of the
// im2col matrix) followed by one DotGeneral per tile. Its ConvGeneral has
// the signature and semantics of compute.Function.ConvGeneral, so it can
// stand in for the backend's own op, and it builds only portable ops
// (Transpose, Pad, Slice, Gather, Reshape, Concatenate, DotGeneral) on the
// function it is given (and BroadcastInDim for the zero phases of
// phases.go).
type Lowering struct {
	// MaxPatchBytes bounds the patch matrix of one tile; zero means
	// DefaultMaxPatchBytes.
	MaxPatchBytes int
	// SlicePatches builds the patch matrix from one strided Slice per
	// kernel (or output) position and a Concatenate instead of one Gather;
	// kept to compare the two (the Go backend's Slice copies element by
	// element, its Gather copies contiguous runs).
	SlicePatches bool
	// NoPatchReuse builds every convolution's patches anew, where the
	// wrapper otherwise computes a kernel gradient from the patches of the
	// forward convolution of the same input (reuse.go); kept to measure
	// the reuse.
	NoPatchReuse bool
	// NoShiftPatches builds the patches of stride-1 convolutions with the
	// general Gather too, where they otherwise come from shifted runs of
	// the flattened input (shift.go); kept to measure the difference.
	NoShiftPatches bool
	// MaxShiftWaste is the largest ratio of a convolution's padded input
	// grid to its output for which shifted runs are used; zero means
	// DefaultMaxShiftWaste.
	MaxShiftWaste float64
	// NoPhases lowers input-dilated convolutions (strided convolutions'
	// input gradients) as they are, where they are otherwise split into
	// one convolution per output phase (phases.go); kept to measure it.
	NoPhases bool
	// NoTransposePlans, NoDotLayouts and NoDenseVJP keep the backend's
	// Transpose, DotGeneral and FusedDenseVJP as they are, where the
	// wrapper otherwise emits them with cheaper transposes (transposes.go,
	// dot.go, dense.go); kept to measure each.
	NoTransposePlans, NoDotLayouts, NoDenseVJP bool
	// ShiftTileBytes bounds the patches of one tile of a shifted
	// convolution, built and multiplied one tile at a time
	// (shift_tiles.go); zero means DefaultShiftTileBytes, a negative value
	// builds them whole.
	ShiftTileBytes int
	// ShiftSplit cuts the batch of a shifted convolution into this many
	// blocks of whole images for the matmul's workers (split.go), lowered
	// to a divisor of the batch; zero means DefaultShiftSplit, 1 no split.
	ShiftSplit int
	// NoBatchNormReuse computes BatchNormGradient from the operand alone,
	// with x̂ formed in full, where it otherwise takes the centered operand
	// its BatchNormForTraining kept (bnreuse.go); kept to measure the
	// difference.
	NoBatchNormReuse bool
	// NoRecycle compiles graphs without recycle slots and makes
	// Backend.Recycle finalize what it is given, as the backend's own
	// Finalize would (recycle.go); kept to measure the difference.
	NoRecycle bool
	// WholeWindowPooling lowers non-overlapping pooling with one reduction
	// over all window axes and its gradient with ArgMinMax over the
	// transposed, flattened windows (LowerReduceWindow,
	// LowerSelectAndScatter), where it is otherwise lowered one windowed
	// axis at a time (pool_axes.go); kept to measure the difference.
	WholeWindowPooling bool
	// ConvKernel, when set, reports whether the inner backend runs a
	// convolution with a kernel faster than its lowering; such a
	// convolution is left to the backend (ConvGeneral in function.go).
	// volt's engine sets internal/gokernels.RunsConv (oneDNN); nil lowers
	// every convolution the rules choose.
	ConvKernel func(input, kernel shapes.Shape, axes compute.ConvolveAxesConfig, strides []int, paddings [][2]int,
		inputDilations, kernelDilations []int, channelGroupCount, batchGroupCount int) bool
	// PoolKernel, when set, reports whether the inner backend runs a max
	// or min pooling (ReduceWindow) and its gradient (SelectAndScatter)
	// with a kernel faster than their lowering; such poolings are left to
	// the backend (function.go). volt's engine sets
	// internal/gokernels.RunsPooling; nil lowers every pooling the rules
	// choose.
	PoolKernel func(dtype dtypes.DType, dims, window, strides []int, paddings [][2]int,
		inputDilations, windowDilations []int) bool
	// PoolArgMinMax spreads the gradient of every windowed axis with
	// ArgMinMax, where windows of 2 otherwise compare their two halves
	// (scatterPairs in pool_axes.go); kept to measure the difference.
	PoolArgMinMax bool
	// NoScatterConvs lowers full-padded stride-1 convolutions (input
	// gradients of valid ones) through shifted runs or the patch matrix,
	// where they are otherwise multiplied first and their shifted products
	// summed (scatter.go); kept to measure the difference.
	NoScatterConvs bool
	// NoTransposedProducts multiplies the patches of a shifted convolution
	// with fewer patch rows than output channels as the others, and moves
	// the product to channels-last, where its patches are otherwise moved
	// instead (shiftPatchesTransposedProduct in split.go); kept to measure
	// the difference.
	NoTransposedProducts bool
	// ChannelsLastShifts computes a shifted convolution of a channels-last
	// input with at least ChannelsLastShiftMinChannels input channels
	// channels-last (shift_cl.go), where its channels are otherwise moved
	// first. Off by default: it measured faster at one thread and slower
	// at two (see shift_cl.go).
	ChannelsLastShifts bool
	// ChannelsLastShiftMinChannels is the fewest input channels of a
	// channels-last shifted convolution (shift_cl.go); zero means
	// DefaultChannelsLastShiftMinChannels.
	ChannelsLastShiftMinChannels int
}

// ConvGeneral builds the convolution of input with kernel on f, with the
// arguments of compute.Function.ConvGeneral. batchGroupCount must be 1 and
// the shapes static; Supports tells which calls it accepts.
func (l Lowering) ConvGeneral(f compute.Function, input, kernel compute.Value, axes compute.ConvolveAxesConfig,
	strides []int, paddings [][2]int, inputDilations, kernelDilations []int,
	channelGroupCount, batchGroupCount int) (compute.Value, error) {
	y, _, err := l.convGeneral(f, nil, input, kernel, axes, strides, paddings, inputDilations, kernelDilations,
		channelGroupCount, batchGroupCount)
	return y, err
}

// convGeneral is ConvGeneral with a cache of the patch matrices built on f
// (nil: none): a convolution that reverses a cached forward one is emitted
// from its patches (reverseFromPatches), and the patches built here are
// added to the cache. how tells whether the convolution came from cached
// patches or from shifted runs (shiftConv).
func (l Lowering) convGeneral(f compute.Function, cache patchCache, input, kernel compute.Value,
	axes compute.ConvolveAxesConfig, strides []int, paddings [][2]int, inputDilations, kernelDilations []int,
	channelGroupCount, batchGroupCount int) (y compute.Value, how convHow, err error) {
	if l.NoPatchReuse || l.SlicePatches {
		cache = nil
	}
	inputShape, err := f.Shape(input)
	if err != nil {
		return nil, convHow{}, err
	}
	kernelShape, err := f.Shape(kernel)
	if err != nil {
		return nil, convHow{}, err
	}
	channelGroupCount = max(channelGroupCount, 1)
	batchGroupCount = max(batchGroupCount, 1)
	outputShape, err := shapeinference.ConvGeneral(inputShape, kernelShape, axes, strides, paddings,
		inputDilations, kernelDilations, channelGroupCount, batchGroupCount)
	if err != nil {
		return nil, convHow{}, err
	}
	if reason := unsupported(inputShape, kernelShape, batchGroupCount); reason != "" {
		return nil, convHow{}, fmt.Errorf("golower: cannot lower this convolution: %s", reason)
	}
	if y, ok, err := reverseFromPatches(f, cache, input, kernel, kernelShape, outputShape, axes, strides, paddings,
		inputDilations, kernelDilations, channelGroupCount, batchGroupCount); ok || err != nil {
		return y, convHow{reused: ok}, err
	}
	if !l.NoPhases && !l.SlicePatches {
		if y, ok, err := l.phased(f, input, kernel, inputShape, kernelShape, outputShape, axes, strides, paddings,
			inputDilations, kernelDilations, channelGroupCount, batchGroupCount); ok || err != nil {
			return y, convHow{phased: ok}, err
		}
	}
	b := &emitter{f: f, dtype: inputShape.DType, maxPatchBytes: l.MaxPatchBytes, slicePatches: l.SlicePatches,
		cache: cache, shiftSplit: l.shiftSplit, shiftTileCount: l.shiftTileCount,
		noTransposedProducts: l.NoTransposedProducts, channelsLastMin: l.channelsLastShiftMin()}
	if b.maxPatchBytes <= 0 {
		b.maxPatchBytes = DefaultMaxPatchBytes
	}
	if b.maxShiftWaste = l.MaxShiftWaste; b.maxShiftWaste <= 0 {
		b.maxShiftWaste = DefaultMaxShiftWaste
	}
	if !l.NoScatterConvs && !l.SlicePatches {
		y, ok, err := b.scatterConv(input, kernel, inputShape, kernelShape, outputShape, axes, strides, paddings,
			inputDilations, kernelDilations, channelGroupCount)
		if ok || err != nil {
			return y, convHow{scattered: ok}, err
		}
	}
	if !l.NoShiftPatches && !l.SlicePatches {
		var key *patchKey
		if cache != nil {
			n := len(axes.InputSpatial)
			kernelSize := make([]int, n)
			for i, axis := range axes.KernelSpatial {
				kernelSize[i] = kernelShape.Dimensions[axis]
			}
			inPerm := append(append([]int{axes.InputBatch}, axes.InputSpatial...), axes.InputChannels)
			key = &patchKey{input: input, geometry: patchGeometry(inPerm, kernelSize, perAxis(strides, n),
				perAxis(kernelDilations, n), perAxis(inputDilations, n), lowPaddings(paddings, n))}
		}
		y, ok, err := b.shiftConv(input, kernel, inputShape, kernelShape, outputShape, axes, strides, paddings,
			inputDilations, kernelDilations, channelGroupCount, key)
		if ok || err != nil {
			return y, convHow{shifted: ok, shiftTiled: b.shiftTiled}, err
		}
	}
	y, err = b.conv(input, kernel, inputShape, kernelShape, outputShape, axes, strides, paddings,
		inputDilations, kernelDilations, channelGroupCount)
	return y, convHow{}, err
}

// convHow tells how convGeneral emitted a convolution.
type convHow struct {
	reused  bool // from the patches of an earlier convolution (reuse.go)
	shifted bool // from shifted runs of the flattened input (shift.go)
	// shiftTiled: shifted, in tiles (shift_tiles.go)
	shiftTiled bool
	phased     bool // split by output phases (phases.go)
	// scattered: a full-padded convolution multiplied first, its shifted
	// products summed (scatter.go)
	scattered bool
}

// Supports reports whether Lowering.ConvGeneral accepts a convolution of
// these shapes and batch grouping: floating-point dtypes, static shapes,
// no batch grouping.
func Supports(inputShape, kernelShape shapes.Shape, batchGroupCount int) bool {
	return unsupported(inputShape, kernelShape, max(batchGroupCount, 1)) == ""
}

// unsupported names why the lowering does not handle a convolution, or
// returns "" when it does.
func unsupported(inputShape, kernelShape shapes.Shape, batchGroupCount int) string {
	switch {
	case batchGroupCount != 1:
		return fmt.Sprintf("batchGroupCount=%d (only 1 is lowered)", batchGroupCount)
	case inputShape.IsDynamic() || kernelShape.IsDynamic():
		return "dynamic shapes"
	case inputShape.DType != dtypes.Float32 && inputShape.DType != dtypes.Float64:
		return fmt.Sprintf("dtype %s (only float32 and float64 are lowered)", inputShape.DType)
	}
	return ""
}

// emitter builds the ops of one lowered convolution on f.
type emitter struct {
	f             compute.Function
	dtype         dtypes.DType
	maxPatchBytes int
	maxShiftWaste float64
	slicePatches  bool
	// noTransposedProducts is Lowering.NoTransposedProducts.
	noTransposedProducts bool
	cache                patchCache          // nil: patches are not kept
	shiftSplit           func(batch int) int // Lowering.shiftSplit
	// channelsLastMin is Lowering.channelsLastShiftMin.
	channelsLastMin int
	// shiftTileCount is Lowering.shiftTileCount.
	shiftTileCount func(patchBytes, patchRows, outChannels int) int
	// shiftTiled is set by a shiftConv that built its patches in tiles.
	shiftTiled bool
	// pending is the cache key of the patches the next tiled call builds
	// when it builds them in one piece; tiled clears it.
	pending *patchKey
}

// geometry is a convolution in canonical layout: input [N, I..., C] after
// padding and input dilation, kernel [K..., C/groups, Co], output
// [N, O..., Co].
type geometry struct {
	kernelSize      []int // K per spatial axis
	strides         []int // per spatial axis
	kernelDilations []int // per spatial axis
	inChannels      int   // C
	outChannels     int   // Co
	groups          int
}

// conv transposes input and kernel to the canonical layout, pads, lowers
// and transposes the result to the requested output axes.
func (b *emitter) conv(input, kernel compute.Value, inputShape, kernelShape, outputShape shapes.Shape,
	axes compute.ConvolveAxesConfig, strides []int, paddings [][2]int, inputDilations, kernelDilations []int,
	groups int) (compute.Value, error) {
	rank := inputShape.Rank()
	spatial := rank - 2
	inPerm := append(append([]int{axes.InputBatch}, axes.InputSpatial...), axes.InputChannels)
	x, err := b.transpose(input, inPerm)
	if err != nil {
		return nil, err
	}
	kPerm := append(append(slices.Clone(axes.KernelSpatial), axes.KernelInputChannels), axes.KernelOutputChannels)
	k, err := b.transpose(kernel, kPerm)
	if err != nil {
		return nil, err
	}
	g := geometry{
		kernelSize:      make([]int, spatial),
		strides:         perAxis(strides, spatial),
		kernelDilations: perAxis(kernelDilations, spatial),
		inChannels:      inputShape.Dimensions[axes.InputChannels],
		outChannels:     kernelShape.Dimensions[axes.KernelOutputChannels],
		groups:          groups,
	}
	for i, axis := range axes.KernelSpatial {
		g.kernelSize[i] = kernelShape.Dimensions[axis]
	}
	inputSpatial := make([]int, spatial)
	for i, axis := range axes.InputSpatial {
		inputSpatial[i] = inputShape.Dimensions[axis]
	}
	x, paddedSpatial, err := b.padAndDilate(x, inputShape.Dimensions[axes.InputBatch], inputSpatial, g.inChannels,
		paddings, perAxis(inputDilations, spatial))
	if err != nil {
		return nil, err
	}
	batch := inputShape.Dimensions[axes.InputBatch]
	if b.cache != nil && groups == 1 {
		b.pending = &patchKey{input: input, geometry: patchGeometry(inPerm, g.kernelSize, g.strides,
			g.kernelDilations, perAxis(inputDilations, spatial), lowPaddings(paddings, spatial))}
	}
	y, err := b.tiled(x, k, batch, paddedSpatial, g)
	if err != nil {
		return nil, err
	}
	// y is [N, O..., Co]; output axis j holds canonical axis outPerm[j].
	outPerm := make([]int, rank)
	outPerm[axes.OutputBatch] = 0
	for i, axis := range axes.OutputSpatial {
		outPerm[axis] = 1 + i
	}
	outPerm[axes.OutputChannels] = spatial + 1
	y, err = b.transpose(y, outPerm)
	if err != nil {
		return nil, err
	}
	if got, err := b.f.Shape(y); err != nil || !got.Equal(outputShape) {
		return nil, fmt.Errorf("golower: lowered convolution has shape %s, want %s (err=%v)", got, outputShape, err)
	}
	return y, nil
}

// perAxis returns values, or ones when values is empty.
func perAxis(values []int, n int) []int {
	if len(values) == 0 {
		out := make([]int, n)
		for i := range out {
			out[i] = 1
		}
		return out
	}
	return values
}

// transpose is transposeIfNeeded: nothing for the identity permutation,
// a 2D transpose for a rotation of the axes.
func (b *emitter) transpose(x compute.Value, perm []int) (compute.Value, error) {
	return transposeIfNeeded(b.f, x, perm)
}

// zero returns a scalar zero of the convolution's dtype.
func (b *emitter) zero() (compute.Value, error) {
	return b.f.Constant(zeroSlice(b.dtype))
}

// zeroSlice returns a one-element slice holding a zero of dtype, the flat
// data of a scalar constant.
func zeroSlice(dtype dtypes.DType) any {
	return reflect.MakeSlice(reflect.SliceOf(dtype.GoType()), 1, 1).Interface()
}

// padAndDilate applies input dilation (interior zeros) and edge padding to
// x = [N, I..., C]; negative paddings crop. It returns the new spatial sizes.
func (b *emitter) padAndDilate(x compute.Value, batch int, spatial []int, channels int, paddings [][2]int,
	inputDilations []int) (compute.Value, []int, error) {
	n := len(spatial)
	padAxes := make([]compute.PadAxis, n+2)
	starts := make([]int, n+2)
	limits := append(append([]int{batch}, make([]int, n)...), channels)
	needPad, needCrop := false, false
	out := make([]int, n)
	for i := range n {
		var p [2]int
		if len(paddings) > 0 {
			p = paddings[i]
		}
		dilated := (spatial[i]-1)*inputDilations[i] + 1
		padAxes[i+1] = compute.PadAxis{Start: max(p[0], 0), End: max(p[1], 0), Interior: inputDilations[i] - 1}
		if padAxes[i+1] != (compute.PadAxis{}) {
			needPad = true
		}
		padded := dilated + max(p[0], 0) + max(p[1], 0)
		starts[i+1] = max(-p[0], 0)
		limits[i+1] = padded - max(-p[1], 0)
		if p[0] < 0 || p[1] < 0 {
			needCrop = true
		}
		out[i] = limits[i+1] - starts[i+1]
	}
	var err error
	if needPad {
		zero, err := b.zero()
		if err != nil {
			return nil, nil, err
		}
		if x, err = b.f.Pad(x, zero, padAxes...); err != nil {
			return nil, nil, err
		}
	}
	if needCrop {
		if x, err = b.f.Slice(x, starts, limits, nil); err != nil {
			return nil, nil, err
		}
	}
	return x, out, nil
}

// outputSize is the number of output positions along one spatial axis.
func outputSize(inputSize, kernelSize, dilation, stride int) int {
	span := (kernelSize-1)*dilation + 1
	if inputSize < span {
		return 0
	}
	return (inputSize-span)/stride + 1
}

func prod(values []int) int {
	p := 1
	for _, v := range values {
		p *= v
	}
	return p
}
