package golower

import (
	"fmt"
	"slices"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
)

// Stride-1 convolutions from shifted copies of the flattened input.
//
// The Gather of gatherTimesKernel copies the patch matrix [N·O, K·C] in
// runs of one kernel row (K_last·C values: 48 floats for a 3×3 kernel on
// 16 channels, 3 for a one-channel stem), so it costs far more than the
// bytes it moves. For a convolution with unit strides and input dilations
// and no negative padding there is a layout whose runs are whole images:
// pad the input once, move its channels first and flatten each channel to
// one row over all N padded images, x[C, N·P] (P = ∏ padded sizes). The
// input element an output position p (counted on the padded grid) reads
// through kernel position k is x[c, p + s_k], s_k = Σ_i k_i·d_i·stride_i
// (the flat offset of the kernel position), so the patch matrix
// [K, C, N·P] holds one contiguous run of N·P values per (k, c): one
// Gather of K·C runs. Then
//
//	y[Co, N·P] = w[Co, K·C] · patches[K·C, N·P]
//
// is one DotGeneral in the layout the Go backend's matmul takes without a
// copy, computed on the whole padded grid: the positions past the output
// (the last span-1 of each padded axis) read across rows or images and
// are cropped afterwards. An extra zero image at the end of the batch
// keeps the shifted reads of the last image in bounds. The cost is the
// crop's wasted work, P/∏O of the product (1.15× for 28×28 with "same"
// padding, 1.65× at 7×7), against a Gather at memory speed.
//
// The kernel gradient of such a convolution is the product of the same
// patches with the output gradient zero-padded onto the padded grid,
// dw[K·C, Co] = patches[K·C, N·P] · dy[N·P, Co], so it is kept for the
// kernel gradient like gatherTimesKernel's patches (reuse.go).

// DefaultMaxShiftWaste bounds the padded grid of shiftConv relative to
// the output when a Lowering leaves MaxShiftWaste at zero: BenchmarkResNetConvs per convolution measured 28×28 "same"
// (ratio 1.15) at 0.94–1.02× the CPU time of gatherTimesKernel and the
// one-channel stem well below it, but 14×14 (1.31) at 1.20× and 7×7
// (1.65) at 1.26–1.41×. Under the default backend (go:ops_by_graph, with
// tiles), examples/resnet's whole step with a bound of 2 (its 14×14 and
// 7×7 convolutions shifted too) took 1.21–1.23× as long at two threads and
// 1.13–1.14× at one (two lowerings' fits taking turns step by step in one
// process, 30 steps each, twice).
const DefaultMaxShiftWaste = 1.2

// shiftConv emits the convolution by shifted runs (see above), or returns
// ok=false when it does not apply: channel groups, strides or input
// dilations other than 1, negative padding, an empty output, patches
// larger than maxPatchBytes or a padded grid more than maxShiftWaste
// times the output (Lowering.MaxShiftWaste). A non-nil key adds the patches to the cache.
func (b *emitter) shiftConv(input, kernel compute.Value, inputShape, kernelShape, outputShape shapes.Shape,
	axes compute.ConvolveAxesConfig, strides []int, paddings [][2]int, inputDilations, kernelDilations []int,
	groups int, key *patchKey) (y compute.Value, ok bool, err error) {
	n := len(axes.InputSpatial)
	if groups != 1 || n == 0 {
		return nil, false, nil
	}
	strides, inputDilations, kernelDilations = perAxis(strides, n), perAxis(inputDilations, n), perAxis(kernelDilations, n)
	batch := inputShape.Dimensions[axes.InputBatch]
	c := inputShape.Dimensions[axes.InputChannels]
	co := kernelShape.Dimensions[axes.KernelOutputChannels]
	kernelSize := make([]int, n)
	padded := make([]int, n) // Ip per spatial axis
	outSpatial := make([]int, n)
	padAxes := make([]compute.PadAxis, n+2)
	padAxes[1] = compute.PadAxis{End: 1} // the extra zero image
	for i := range n {
		if strides[i] != 1 || inputDilations[i] != 1 {
			return nil, false, nil
		}
		var p [2]int
		if len(paddings) > 0 {
			p = paddings[i]
		}
		if p[0] < 0 || p[1] < 0 {
			return nil, false, nil
		}
		padAxes[2+i] = compute.PadAxis{Start: p[0], End: p[1]}
		kernelSize[i] = kernelShape.Dimensions[axes.KernelSpatial[i]]
		padded[i] = inputShape.Dimensions[axes.InputSpatial[i]] + p[0] + p[1]
		outSpatial[i] = outputSize(padded[i], kernelSize[i], kernelDilations[i], 1)
		if outSpatial[i] == 0 || outSpatial[i] != outputShape.Dimensions[axes.OutputSpatial[i]] {
			return nil, false, nil
		}
	}
	image := prod(padded)
	grid := batch * image // N·P
	numKernel := prod(kernelSize)
	if numKernel*c*grid*b.dtype.Size() > b.maxPatchBytes || float64(image) > b.maxShiftWaste*float64(prod(outSpatial)) {
		return nil, false, nil
	}

	// One start offset s_k per kernel position: indices [K..., 1].
	offsets := make([]int32, 0, numKernel)
	pos := make([]int, n)
	for range numKernel {
		s, stride := 0, 1
		for i := n - 1; i >= 0; i-- {
			s += pos[i] * kernelDilations[i] * stride
			stride *= padded[i]
		}
		offsets = append(offsets, int32(s))
		for i := n - 1; i >= 0; i-- {
			pos[i]++
			if pos[i] < kernelSize[i] {
				break
			}
			pos[i] = 0
		}
	}
	if b.channelsLastMin > 0 && c >= b.channelsLastMin && channelsLastAxes(axes) {
		y, entry, err := b.shiftConvChannelsLast(input, kernel, inputShape, kernelShape, axes, padAxes, padded,
			outSpatial, offsets)
		if err != nil {
			return nil, false, err
		}
		if key != nil && b.cache != nil {
			b.cache[*key] = entry
		}
		if got, err := b.f.Shape(y); err != nil || !got.Equal(outputShape) {
			return nil, false, fmt.Errorf("golower: shifted convolution has shape %s, want %s (err=%v)", got, outputShape, err)
		}
		return y, true, nil
	}
	// x as [C, N+1, Ip...], flattened to [C, (N+1)·P].
	inDims := inputShape.Dimensions
	x, err := b.channelsFirstPadded(input, inDims, axes, padAxes, c, (batch+1)*image)
	if err != nil {
		return nil, false, err
	}
	// The kernel as [Co, K·C], its rows in the patches' (k, c) order.
	w, err := fastTranspose(b.f, kernel, kernelShape.Dimensions,
		append(append([]int{axes.KernelOutputChannels}, axes.KernelSpatial...), axes.KernelInputChannels))
	if err != nil {
		return nil, false, err
	}
	if w, err = b.f.Reshape(w, co, numKernel, c); err != nil {
		return nil, false, err
	}
	// The patches are [K, C, N·P] (or [S, K, C, N·P/S], split.go), kernel
	// positions flattened, and are used as they are: the Go backend copies
	// a Reshape of a value that has other users, and the kernel gradient
	// uses them too.
	entry := patchEntry{outSpatial: slices.Clone(outSpatial), shiftPadded: padded}
	transposed := false // the product is [N·P, Co] already
	if tiles := b.shiftTileCount(numKernel*c*grid*b.dtype.Size(), numKernel*c, co); tiles > 1 {
		entry.shiftTiles, entry.shiftInput, entry.shiftOffsets, entry.shiftChannels = shiftTilesOf(grid, tiles), x, offsets, c
		b.shiftTiled = true
		y, err = shiftTilesTimesKernel(b.f, x, w, offsets, c, entry.shiftTiles)
	} else if transposed = !b.noTransposedProducts && numKernel*c < co; transposed {
		entry.shiftSplit = 1
		entry.patches, y, err = b.shiftPatchesTransposedProduct(x, w, offsets, c, co, grid)
	} else {
		entry.shiftSplit = b.shiftSplit(batch)
		entry.patches, y, err = b.shiftPatchesTimesKernel(x, w, offsets, c, co, grid, entry.shiftSplit)
	}
	if err != nil {
		return nil, false, err
	}
	if key != nil && b.cache != nil {
		b.cache[*key] = entry
	}
	// [Co, N·P] to [N, Ip..., Co] (the transposed product is [N·P, Co]
	// already), cropped to [N, O..., Co].
	if !transposed {
		if y, err = fastTranspose(b.f, y, []int{co, grid}, []int{1, 0}); err != nil {
			return nil, false, err
		}
	}
	gridDims := append(append([]int{batch}, padded...), co)
	if y, err = b.f.Reshape(y, gridDims...); err != nil {
		return nil, false, err
	}
	if y, err = cropHigh(b.f, y, gridDims, append(append([]int{batch}, outSpatial...), co)); err != nil {
		return nil, false, err
	}
	outPerm := make([]int, n+2)
	outPerm[axes.OutputBatch] = 0
	for i, axis := range axes.OutputSpatial {
		outPerm[axis] = 1 + i
	}
	outPerm[axes.OutputChannels] = n + 1
	if y, err = fastTranspose(b.f, y, append(append([]int{batch}, outSpatial...), co), outPerm); err != nil {
		return nil, false, err
	}
	if got, err := b.f.Shape(y); err != nil || !got.Equal(outputShape) {
		return nil, false, fmt.Errorf("golower: shifted convolution has shape %s, want %s (err=%v)", got, outputShape, err)
	}
	return y, true, nil
}

// reverseFromShiftPatches emits the kernel gradient of a convolution
// lowered by shiftConv from its patches [K, C, N·P]: the output gradient
// (this convolution's kernel) is zero-padded onto the padded grid and
// multiplied in, dw[K·C, Co] = patches · dy[N·P, Co]; see reuse.go for
// the identity.
func reverseFromShiftPatches(f compute.Function, cache patchCache, entry patchEntry, kernel compute.Value,
	kernelShape, outputShape shapes.Shape, axes compute.ConvolveAxesConfig, kernelSize, inSpatial, lowPads,
	dilations []int) (compute.Value, error) {
	n := len(kernelSize)
	co := kernelShape.Dimensions[axes.KernelOutputChannels]
	batch := kernelShape.Dimensions[axes.KernelInputChannels]
	channels := outputShape.Dimensions[axes.OutputBatch]
	grid := batch * prod(entry.shiftPadded)
	// dy as [N, O..., Co], padded to [N, Ip..., Co] and flattened.
	dyPerm := append(append([]int{axes.KernelInputChannels}, axes.KernelSpatial...), axes.KernelOutputChannels)
	if rows, offset, ok := gradientRows(cache, entry, kernel, dyPerm, kernelSize, inSpatial, lowPads,
		dilations); ok {
		var r compute.Value
		var err error
		if entry.shiftTiles != nil {
			r, err = shiftTilesTimesGradient(f, entry, rows, co, offset)
		} else {
			var dy compute.Value
			if dy, err = rowRange(f, rows, shiftTile{offset, grid}, co); err == nil {
				r, err = shiftPatchesTimesGradient(f, entry, dy, grid, co)
			}
		}
		if err != nil {
			return nil, err
		}
		return kernelGradientOut(f, r, kernelSize, channels, co, axes)
	}
	dy, err := fastTranspose(f, kernel, kernelShape.Dimensions, dyPerm)
	if err != nil {
		return nil, err
	}
	padAxes := make([]compute.PadAxis, n+2)
	needPad := false
	for i := range n {
		padAxes[1+i] = compute.PadAxis{End: entry.shiftPadded[i] - entry.outSpatial[i]}
		needPad = needPad || padAxes[1+i].End > 0
	}
	if needPad {
		zero, err := f.Constant(zeroSlice(outputShape.DType))
		if err != nil {
			return nil, err
		}
		if dy, err = f.Pad(dy, zero, padAxes...); err != nil {
			return nil, err
		}
	}
	if dy, err = f.Reshape(dy, grid, co); err != nil {
		return nil, err
	}
	r, err := shiftPatchesTimesGradient(f, entry, dy, grid, co)
	if err != nil {
		return nil, err
	}
	return kernelGradientOut(f, r, kernelSize, channels, co, axes)
}

// kernelGradientOut moves the kernel gradient r [K·C, Co] (in whichever
// shape) to the layout the convolution's output axes ask for.
func kernelGradientOut(f compute.Function, r compute.Value, kernelSize []int, channels, co int,
	axes compute.ConvolveAxesConfig) (compute.Value, error) {
	n := len(kernelSize)
	// r is [K..., C, Co]: the output's spatial axes, batch and channels.
	rDims := append(append(slices.Clone(kernelSize), channels), co)
	r, err := f.Reshape(r, rDims...)
	if err != nil {
		return nil, err
	}
	outPerm := make([]int, n+2)
	for i, axis := range axes.OutputSpatial {
		outPerm[axis] = i
	}
	outPerm[axes.OutputBatch] = n
	outPerm[axes.OutputChannels] = n + 1
	return fastTranspose(f, r, rDims, outPerm)
}

// gradientRows returns the output gradient of a shifted convolution on
// its padded grid as rows [offset, offset+N·P) of the padded rows
// [(N+1)·P, Co] that a channels-last shifted input gradient of it read
// (paddedRows in shift_cl.go), when dy is channels-last and the
// convolution's paddings add up to its kernel's span less one on every
// axis ("same" ones): then that input gradient padded dy by span-1-lo low
// and lo high to the same padded sizes, and row p + Σ (span-1-lo)·stride
// holds dy at grid position p, or a zero where p lies past the output
// (in a padding row, column or the extra zero example). GoMLX builds the
// input gradient first. ok is false when no such rows were built (the
// input gradient was not lowered channels-last: Lowering.ChannelsLastShifts
// off), dy is not laid out so or the paddings differ; the kernel gradient
// then pads dy itself. The rows hold the values the Pad onto the grid
// held, so the kernel gradient's bits are unchanged (checked on a 28×28
// 16-channel case). With channels-last shifts on, examples/resnet's step
// took 0.975× the wall time at one thread and at two without the second
// Pad (paired in one process, 20 steps; CPU 0.971× and 0.953×).
// TestGradientRowsShareThePad counts the Pads.
func gradientRows(cache patchCache, entry patchEntry, dy compute.Value, dyPerm, kernelSize, inSpatial, lowPads,
	dilations []int) (rows compute.Value, offset int, ok bool) {
	n := len(kernelSize)
	if cache == nil || !slices.Equal(dyPerm, identityPerm(n+2)) || len(inSpatial) != n || len(lowPads) != n {
		return nil, 0, false
	}
	pads := make([]compute.PadAxis, n+2)
	pads[0] = compute.PadAxis{End: 1}
	stride := 1
	offsets := make([]int, n)
	for i := n - 1; i >= 0; i-- {
		span := (kernelSize[i]-1)*dilations[i] + 1
		lo, hi := lowPads[i], entry.shiftPadded[i]-inSpatial[i]-lowPads[i]
		if lo+hi != span-1 || lo < 0 || hi < 0 {
			return nil, 0, false
		}
		pads[1+i] = compute.PadAxis{Start: span - 1 - lo, End: lo}
		offsets[i] = (span - 1 - lo) * stride
		stride *= entry.shiftPadded[i]
	}
	for _, o := range offsets {
		offset += o
	}
	built, found := cache[paddedRowsKey(dy, pads)]
	if !found {
		return nil, 0, false
	}
	return built.shiftInputRows, offset, true
}

// channelsFirstPadded returns input (dimensions inDims, laid out as axes
// says) moved to [C, N, spatial...], padded by padAxes and flattened to
// [c, flat]: the operand of the shifted and the scattered convolutions.
func (b *emitter) channelsFirstPadded(input compute.Value, inDims []int, axes compute.ConvolveAxesConfig,
	padAxes []compute.PadAxis, c, flat int) (compute.Value, error) {
	x, err := fastTranspose(b.f, input, inDims, append([]int{axes.InputChannels, axes.InputBatch}, axes.InputSpatial...))
	if err != nil {
		return nil, err
	}
	zero, err := b.zero()
	if err != nil {
		return nil, err
	}
	if x, err = b.f.Pad(x, zero, padAxes...); err != nil {
		return nil, err
	}
	return b.f.Reshape(x, c, flat)
}

// fastTranspose is Transpose of x (dimensions dims) that emits nothing for
// the identity and a 2D transpose (which the Go backend runs tiled and in
// parallel) for a rotation of the axes, such as channels-last to
// channels-first.
func fastTranspose(f compute.Function, x compute.Value, dims, perm []int) (compute.Value, error) {
	rank := len(perm)
	r := perm[0]
	rotation := true
	for i, p := range perm {
		if p != (r+i)%rank {
			rotation = false
		}
	}
	if rotation && r == 0 {
		return x, nil
	}
	if !rotation || rank == 2 {
		return f.Transpose(x, perm...)
	}
	flat, err := f.Reshape(x, prod(dims[:r]), prod(dims[r:]))
	if err != nil {
		return nil, err
	}
	if flat, err = f.Transpose(flat, 1, 0); err != nil {
		return nil, err
	}
	out := make([]int, rank)
	for i, p := range perm {
		out[i] = dims[p]
	}
	return f.Reshape(flat, out...)
}

// cropHigh keeps the leading keep[i] of each axis of x (dimensions dims),
// rank ≥ 3 with the first and last axes kept whole, with one Gather that
// copies runs of the last two axes.
func cropHigh(f compute.Function, x compute.Value, dims, keep []int) (compute.Value, error) {
	if slices.Equal(dims, keep) {
		return x, nil
	}
	rank := len(dims)
	m := rank - 2 // gathered axes: the batch and all spatial axes but the last
	grid := keep[:m]
	count := prod(grid)
	indices := make([]int32, 0, count*m)
	pos := make([]int, m)
	for range count {
		for _, p := range pos {
			indices = append(indices, int32(p))
		}
		for a := m - 1; a >= 0; a-- {
			pos[a]++
			if pos[a] < grid[a] {
				break
			}
			pos[a] = 0
		}
	}
	startIndices, err := f.Constant(indices, append(slices.Clone(grid), m)...)
	if err != nil {
		return nil, err
	}
	sliceSizes := make([]int, rank)
	collapsed := make([]int, m)
	for a := range m {
		sliceSizes[a] = 1
		collapsed[a] = a
	}
	sliceSizes[m], sliceSizes[m+1] = keep[m], keep[m+1]
	return f.Gather(x, startIndices, m, []int{m, m + 1}, collapsed, identityPerm(m), sliceSizes, true)
}
