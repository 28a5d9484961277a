package fastconv

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

// Lowering emits a convolution as patch extraction (strided slices
// concatenated into an im2col matrix) followed by one DotGeneral per tile.
// Its ConvGeneral has the signature and semantics of
// compute.Function.ConvGeneral, so it can stand in for the backend's own
// op, and it builds only portable ops (Transpose, Pad, Slice, Reshape,
// Concatenate, DotGeneral) on the function it is given.
type Lowering struct {
	// MaxPatchBytes bounds the patch matrix of one tile; zero means
	// DefaultMaxPatchBytes.
	MaxPatchBytes int
	// SlicePatches builds the patch matrix from one strided Slice per
	// kernel (or output) position and a Concatenate instead of one Gather;
	// kept to compare the two (the Go backend's Slice copies element by
	// element, its Gather copies contiguous runs).
	SlicePatches bool
}

// ConvGeneral builds the convolution of input with kernel on f, with the
// arguments of compute.Function.ConvGeneral. batchGroupCount must be 1 and
// the shapes static; Supports tells which calls it accepts.
func (l Lowering) ConvGeneral(f compute.Function, input, kernel compute.Value, axes compute.ConvolveAxesConfig,
	strides []int, paddings [][2]int, inputDilations, kernelDilations []int,
	channelGroupCount, batchGroupCount int) (compute.Value, error) {
	inputShape, err := f.Shape(input)
	if err != nil {
		return nil, err
	}
	kernelShape, err := f.Shape(kernel)
	if err != nil {
		return nil, err
	}
	channelGroupCount = max(channelGroupCount, 1)
	batchGroupCount = max(batchGroupCount, 1)
	outputShape, err := shapeinference.ConvGeneral(inputShape, kernelShape, axes, strides, paddings,
		inputDilations, kernelDilations, channelGroupCount, batchGroupCount)
	if err != nil {
		return nil, err
	}
	if reason := unsupported(inputShape, kernelShape, batchGroupCount); reason != "" {
		return nil, fmt.Errorf("fastconv: cannot lower this convolution: %s", reason)
	}
	b := &emitter{f: f, dtype: inputShape.DType, maxPatchBytes: l.MaxPatchBytes, slicePatches: l.SlicePatches}
	if b.maxPatchBytes <= 0 {
		b.maxPatchBytes = DefaultMaxPatchBytes
	}
	return b.conv(input, kernel, inputShape, kernelShape, outputShape, axes, strides, paddings,
		inputDilations, kernelDilations, channelGroupCount)
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
	slicePatches  bool
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
		return nil, fmt.Errorf("fastconv: lowered convolution has shape %s, want %s (err=%v)", got, outputShape, err)
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

// transpose is Transpose that emits nothing for the identity permutation.
func (b *emitter) transpose(x compute.Value, perm []int) (compute.Value, error) {
	identity := true
	for i, p := range perm {
		if p != i {
			identity = false
		}
	}
	if identity {
		return x, nil
	}
	return b.f.Transpose(x, perm...)
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

// tiled runs the convolution of the padded canonical input x = [N, I..., C]
// in tiles whose patch matrix fits maxPatchBytes: first along the batch,
// then, one example at a time, along the first output spatial axis.
func (b *emitter) tiled(x, k compute.Value, batch int, spatial []int, g geometry) (compute.Value, error) {
	outSpatial := make([]int, len(spatial))
	for i := range spatial {
		outSpatial[i] = outputSize(spatial[i], g.kernelSize[i], g.kernelDilations[i], g.strides[i])
	}
	perExample := prod(outSpatial) * prod(g.kernelSize) * g.inChannels * b.dtype.Size()
	if batch*perExample <= b.maxPatchBytes || len(spatial) == 0 {
		return b.patchesTimesKernel(x, k, batch, spatial, outSpatial, g)
	}
	if batch > 1 {
		tile := max(1, b.maxPatchBytes/max(perExample, 1))
		var parts []compute.Value
		for start := 0; start < batch; start += tile {
			end := min(start+tile, batch)
			part, err := b.sliceAxis(x, 0, start, end, len(spatial)+2)
			if err != nil {
				return nil, err
			}
			y, err := b.tiled(part, k, end-start, spatial, g)
			if err != nil {
				return nil, err
			}
			parts = append(parts, y)
		}
		return b.concat(0, parts)
	}
	// One example: split the first output spatial axis into row bands.
	perRow := max(perExample/max(outSpatial[0], 1), 1)
	rows := max(1, b.maxPatchBytes/perRow)
	if rows >= outSpatial[0] {
		return b.patchesTimesKernel(x, k, batch, spatial, outSpatial, g)
	}
	span := (g.kernelSize[0]-1)*g.kernelDilations[0] + 1
	var parts []compute.Value
	for start := 0; start < outSpatial[0]; start += rows {
		end := min(start+rows, outSpatial[0])
		inStart, inEnd := start*g.strides[0], (end-1)*g.strides[0]+span
		part, err := b.sliceAxis(x, 1, inStart, inEnd, len(spatial)+2)
		if err != nil {
			return nil, err
		}
		bandSpatial := slices.Clone(spatial)
		bandSpatial[0] = inEnd - inStart
		bandOut := slices.Clone(outSpatial)
		bandOut[0] = end - start
		y, err := b.patchesTimesKernel(part, k, batch, bandSpatial, bandOut, g)
		if err != nil {
			return nil, err
		}
		parts = append(parts, y)
	}
	return b.concat(1, parts)
}

// sliceAxis slices [start, end) of one axis of a rank-`rank` value.
func (b *emitter) sliceAxis(x compute.Value, axis, start, end, rank int) (compute.Value, error) {
	shape, err := b.f.Shape(x)
	if err != nil {
		return nil, err
	}
	starts := make([]int, rank)
	limits := slices.Clone(shape.Dimensions)
	starts[axis], limits[axis] = start, end
	return b.f.Slice(x, starts, limits, nil)
}

// concat is Concatenate that emits nothing for a single operand.
func (b *emitter) concat(axis int, parts []compute.Value) (compute.Value, error) {
	if len(parts) == 1 {
		return parts[0], nil
	}
	return b.f.Concatenate(axis, parts...)
}

func prod(values []int) int {
	p := 1
	for _, v := range values {
		p *= v
	}
	return p
}

// patchesTimesKernel gathers the patches of x = [N, I..., C] and multiplies
// them by the kernel [K..., C/groups, Co], returning [N, O..., Co]. The
// patches come from whichever is fewer: one strided slice per kernel
// position (each covering every output position; the forward convolution
// and the gradient with respect to the input) or one dilated slice per
// output position (each covering the whole kernel window; the gradient with
// respect to the kernel, whose "kernel" is the output gradient).
func (b *emitter) patchesTimesKernel(x, k compute.Value, batch int, spatial, outSpatial []int,
	g geometry) (compute.Value, error) {
	if !b.slicePatches {
		return b.gatherTimesKernel(x, k, batch, outSpatial, g)
	}
	n := len(spatial)
	numOut, numKernel := prod(outSpatial), prod(g.kernelSize)
	c := g.inChannels
	perKernel := numKernel <= numOut
	grid := outSpatial
	if perKernel {
		grid = g.kernelSize
	}
	parts := make([]compute.Value, 0, prod(grid))
	pos := make([]int, n)
	for range prod(grid) {
		starts, limits, strides := make([]int, n+2), make([]int, n+2), make([]int, n+2)
		limits[0], strides[0] = batch, 1
		limits[n+1], strides[n+1] = c, 1
		for i := range n {
			if perKernel {
				starts[i+1] = pos[i] * g.kernelDilations[i]
				limits[i+1] = starts[i+1] + (outSpatial[i]-1)*g.strides[i] + 1
				strides[i+1] = g.strides[i]
			} else {
				starts[i+1] = pos[i] * g.strides[i]
				limits[i+1] = starts[i+1] + (g.kernelSize[i]-1)*g.kernelDilations[i] + 1
				strides[i+1] = g.kernelDilations[i]
			}
		}
		part, err := b.f.Slice(x, starts, limits, strides)
		if err != nil {
			return nil, err
		}
		// perKernel: [1, N·O, C] stacked to [K, N·O, C];
		// per output position: [N, 1, K·C] stacked to [N, O, K·C].
		if perKernel {
			part, err = b.f.Reshape(part, 1, batch*numOut, c)
		} else {
			part, err = b.f.Reshape(part, batch, 1, numKernel*c)
		}
		if err != nil {
			return nil, err
		}
		parts = append(parts, part)
		for i := n - 1; i >= 0; i-- {
			pos[i]++
			if pos[i] < grid[i] {
				break
			}
			pos[i] = 0
		}
	}
	axis := 1
	if perKernel {
		axis = 0
	}
	patches, err := b.concat(axis, parts)
	if err != nil {
		return nil, err
	}
	y, err := b.matmul(patches, k, perKernel, batch*numOut, numKernel, g)
	if err != nil {
		return nil, err
	}
	return b.f.Reshape(y, append(append([]int{batch}, outSpatial...), g.outChannels)...)
}

// matmul contracts patches with the kernel [K..., C/groups, Co], per
// channel group, returning [N·O, Co]. The patches are [K, N·O, C] when
// kernelMajor, else [N·O, K, C] (any shape of that size).
func (b *emitter) matmul(patches, k compute.Value, kernelMajor bool, rows, numKernel int,
	g geometry) (compute.Value, error) {
	c, co := g.inChannels, g.outChannels
	cg, cog := c/g.groups, co/g.groups
	lhsDims := []int{rows, numKernel, g.groups, cg}
	kAxis, gAxis, cAxis := 1, 2, 3
	if kernelMajor {
		lhsDims = []int{numKernel, rows, g.groups, cg}
		kAxis = 0
	}
	if g.groups == 1 {
		// Merge the group axis away so the common case is a plain matmul.
		lhsDims = slices.Delete(slices.Clone(lhsDims), 2, 3)
		cAxis = 2
		lhs, err := b.f.Reshape(patches, lhsDims...)
		if err != nil {
			return nil, err
		}
		if !kernelMajor {
			if lhs, err = b.f.Reshape(lhs, rows, numKernel*c); err != nil {
				return nil, err
			}
			rhs, err := b.f.Reshape(k, numKernel*c, co)
			if err != nil {
				return nil, err
			}
			return b.f.DotGeneral(lhs, []int{1}, nil, rhs, []int{0}, nil, compute.DotGeneralConfig{})
		}
		rhs, err := b.f.Reshape(k, numKernel, c, co)
		if err != nil {
			return nil, err
		}
		return b.f.DotGeneral(lhs, []int{kAxis, cAxis}, nil, rhs, []int{0, 1}, nil, compute.DotGeneralConfig{})
	}
	lhs, err := b.f.Reshape(patches, lhsDims...)
	if err != nil {
		return nil, err
	}
	rhs, err := b.f.Reshape(k, numKernel, cg, g.groups, cog)
	if err != nil {
		return nil, err
	}
	// DotGeneral puts batch axes first: [G, N·O, cog].
	y, err := b.f.DotGeneral(lhs, []int{kAxis, cAxis}, []int{gAxis}, rhs, []int{0, 1}, []int{2}, compute.DotGeneralConfig{})
	if err != nil {
		return nil, err
	}
	if y, err = b.f.Transpose(y, 1, 0, 2); err != nil {
		return nil, err
	}
	return b.f.Reshape(y, rows, co)
}

// OutputShape returns the shape of the convolution's result.
func (c Conv) OutputShape() (shapes.Shape, error) {
	return shapeinference.ConvGeneral(c.Input, c.Kernel, c.Axes, c.Strides, c.Paddings, c.InputDilations,
		c.KernelDilations, max(c.ChannelGroupCount, 1), max(c.BatchGroupCount, 1))
}

// gatherTimesKernel gathers the patch matrix [N, O..., K..., C] of
// x = [N, I..., C] with one Gather and multiplies it by the kernel
// [K..., C/groups, Co], returning [N, O..., Co]. Spatial axes without
// kernel dilation take their whole window in each gathered slice (so
// that, for the last one, K·C values are copied as one run); the others
// enumerate their kernel positions in the start indices.
func (b *emitter) gatherTimesKernel(x, k compute.Value, batch int, outSpatial []int,
	g geometry) (compute.Value, error) {
	n := len(outSpatial)
	var enumerated []int // spatial axes whose kernel positions are indexed
	sliceSizes := []int{batch}
	offsetAxes := []int{0}
	var collapsed []int
	for i := range n {
		if g.kernelDilations[i] == 1 {
			sliceSizes = append(sliceSizes, g.kernelSize[i])
			offsetAxes = append(offsetAxes, 1+n+i)
		} else {
			enumerated = append(enumerated, i)
			sliceSizes = append(sliceSizes, 1)
			collapsed = append(collapsed, 1+i)
		}
	}
	sliceSizes = append(sliceSizes, g.inChannels)
	offsetAxes = append(offsetAxes, 2*n+1)
	startIndexMap := make([]int, n)
	for i := range n {
		startIndexMap[i] = 1 + i
	}
	// Start indices [O..., K_enumerated..., n]: o·stride + k·dilation.
	grid := slices.Clone(outSpatial)
	for _, i := range enumerated {
		grid = append(grid, g.kernelSize[i])
	}
	count := prod(grid)
	indices := make([]int32, 0, count*n)
	pos := make([]int, len(grid))
	for range count {
		for i := range n {
			indices = append(indices, int32(pos[i]*g.strides[i]))
		}
		for j, i := range enumerated {
			indices[len(indices)-n+i] += int32(pos[n+j] * g.kernelDilations[i])
		}
		for a := len(grid) - 1; a >= 0; a-- {
			pos[a]++
			if pos[a] < grid[a] {
				break
			}
			pos[a] = 0
		}
	}
	startIndices, err := b.f.Constant(indices, append(grid, n)...)
	if err != nil {
		return nil, err
	}
	patches, err := b.f.Gather(x, startIndices, len(grid), offsetAxes, collapsed, startIndexMap, sliceSizes, false)
	if err != nil {
		return nil, err
	}
	numOut, numKernel := prod(outSpatial), prod(g.kernelSize)
	y, err := b.matmul(patches, k, false, batch*numOut, numKernel, g)
	if err != nil {
		return nil, err
	}
	return b.f.Reshape(y, append(append([]int{batch}, outSpatial...), g.outChannels)...)
}
