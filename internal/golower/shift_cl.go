package golower

import (
	"fmt"
	"slices"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
)

// Shifted convolutions of channels-last inputs, channels last.
//
// shiftConv moves a channels-last input's channels first ([C, (N+1)·P])
// so that each (kernel position, channel) pair is one run, multiplies
// [Co, K·C] by the patches and moves the product [Co, N·P] back: two 2D
// Transposes of the activation per convolution, which the Go backend runs
// element by element (on examples/resnet's 28×28 16-channel convolutions,
// more CPU than their matrix products). Channels last, the padded input
// flattened to [(N+1)·P, C] holds, for kernel position k, the rows p + s_k
// of a tile of T grid positions as one run of T·C values, so a tile's
// patches [K, T, C] are K runs; their product with the kernel [K, C, Co],
// batched over K, is [K, T, Co], and its sum over K the tile's output
// [T, Co], channels last. The price is that sum (a leading-axis
// reduction of K·T·Co values, in cache) and matrix products that contract
// C values at a time instead of K·C, which is why inputs with few
// channels keep the channels-first path: the one-channel stem took 2.7 ms
// channels-last against 1.6 ms forward. The kernel gradient still needs
// the channels-first runs (dw = patches · dy contracts over positions):
// reverseFromPatches moves the padded input there once, in the backward
// pass, and gathers its tiles as for shift_tiles.go.
//
// It is off by default (Lowering.ChannelsLastShifts). On examples/resnet's
// step (BenchmarkResNetStepPaired/channels-last, its two 28×28 16-channel
// convolutions and their input gradients) it read 0.93–0.98× the wall
// time at one thread, but 1.06× at two in the two runs at the lowest load
// (0.91–1.15× in four under heavy load): the transposes it removes run on
// both cores, and its products batched over K with 16-value contractions
// ran the matmul kernel at well under half the efficiency of the
// channels-first [Co, K·C] · [K·C, T] (a profile at two threads: the same
// CPU in all, 0.8 s fewer in transposes, 0.8 s more in the matmul kernel
// and 0.3 s in the sums over K). Grouping the kernel positions of the last
// axis into runs of kw·C rows (contracting 48 values, a third of the sums)
// read 1.03× at one thread and 0.94–1.02× at two against this: no better.
// Since the lowering may not depend on the number of cores (the bits would,
// TestBitsDoNotDependOnCores), it stays a switch. The sums over K change the
// order of the additions: TestShiftedMatchesDirect compares with the
// direct convolution within its tolerance.

// DefaultChannelsLastShiftMinChannels is the fewest input channels of a
// shifted convolution computed channels-last when a Lowering leaves
// ChannelsLastShiftMinChannels at zero.
const DefaultChannelsLastShiftMinChannels = 16

// channelsLastShiftMin is the fewest input channels of a channels-last
// shifted convolution, 0 for none (ChannelsLastShifts off).
func (l Lowering) channelsLastShiftMin() int {
	switch {
	case !l.ChannelsLastShifts:
		return 0
	case l.ChannelsLastShiftMinChannels > 0:
		return l.ChannelsLastShiftMinChannels
	}
	return DefaultChannelsLastShiftMinChannels
}

// channelsLastAxes reports whether a convolution's input and output are
// [N, spatial..., C] in order.
func channelsLastAxes(axes compute.ConvolveAxesConfig) bool {
	n := len(axes.InputSpatial)
	if axes.InputBatch != 0 || axes.OutputBatch != 0 || axes.InputChannels != n+1 || axes.OutputChannels != n+1 {
		return false
	}
	for i := range n {
		if axes.InputSpatial[i] != 1+i || axes.OutputSpatial[i] != 1+i {
			return false
		}
	}
	return true
}

// shiftConvChannelsLast emits a shifted convolution of a channels-last
// input without moving its channels (see above): tiles of the grid as
// shiftTileCount cuts them (one for ShiftTileBytes < 0), each gathered as
// [K, T, C], multiplied batched over K and summed over K; the tiles'
// [T, Co] concatenated to [N·P, Co], the output on the padded grid, and
// cropped. It returns the output and the cache entry for the kernel
// gradient.
func (b *emitter) shiftConvChannelsLast(input, kernel compute.Value, inputShape, kernelShape shapes.Shape,
	axes compute.ConvolveAxesConfig, padAxes []compute.PadAxis, padded, outSpatial []int, offsets []int32) (
	compute.Value, patchEntry, error) {
	n := len(padded)
	batch := inputShape.Dimensions[0]
	c := inputShape.Dimensions[n+1]
	co := kernelShape.Dimensions[axes.KernelOutputChannels]
	numKernel := len(offsets)
	image := prod(padded)
	grid := batch * image
	zero, err := b.zero()
	if err != nil {
		return nil, patchEntry{}, err
	}
	// padAxes are in [C, N, spatial...] order.
	inPad := make([]compute.PadAxis, n+2)
	inPad[0] = padAxes[1]
	copy(inPad[1:n+1], padAxes[2:])
	x, err := paddedRows(b.f, b.cache, input, zero, inPad, (batch+1)*image, c)
	if err != nil {
		return nil, patchEntry{}, err
	}
	// The kernel as [K, C, Co].
	w, err := transposeIfNeeded(b.f, kernel, append(append([]int{}, axes.KernelSpatial...),
		axes.KernelInputChannels, axes.KernelOutputChannels))
	if err != nil {
		return nil, patchEntry{}, err
	}
	if w, err = b.f.Reshape(w, numKernel, c, co); err != nil {
		return nil, patchEntry{}, err
	}
	tiles := shiftTilesOf(grid, max(1, b.shiftTileCount(numKernel*c*grid*b.dtype.Size(), numKernel*c, 0)))
	b.shiftTiled = len(tiles) > 1
	parts := make([]compute.Value, len(tiles))
	for t, tile := range tiles {
		starts := make([]int32, numKernel)
		for i, offset := range offsets {
			starts[i] = offset + int32(tile.start)
		}
		startIndices, err := b.f.Constant(starts, numKernel, 1)
		if err != nil {
			return nil, patchEntry{}, err
		}
		patches, err := b.f.Gather(x, startIndices, 1, []int{1, 2}, nil, []int{0}, []int{tile.size, c}, true)
		if err != nil {
			return nil, patchEntry{}, err
		}
		r, err := b.f.DotGeneral(patches, []int{2}, []int{0}, w, []int{1}, []int{0}, compute.DotGeneralConfig{})
		if err != nil {
			return nil, patchEntry{}, err
		}
		if parts[t], err = b.f.ReduceSum(r, 0); err != nil {
			return nil, patchEntry{}, err
		}
	}
	y := parts[0]
	if len(parts) > 1 {
		if y, err = b.f.Concatenate(0, parts...); err != nil {
			return nil, patchEntry{}, err
		}
	}
	gridDims := append(append([]int{batch}, padded...), co)
	if y, err = b.f.Reshape(y, gridDims...); err != nil {
		return nil, patchEntry{}, err
	}
	if y, err = cropHigh(b.f, y, gridDims, append(append([]int{batch}, outSpatial...), co)); err != nil {
		return nil, patchEntry{}, err
	}
	entry := patchEntry{outSpatial: slices.Clone(outSpatial), shiftPadded: padded, shiftInputRows: x, shiftOffsets: offsets,
		shiftChannels: c, shiftTiles: shiftTilesOf(grid, max(1, b.shiftTileCount(numKernel*c*grid*b.dtype.Size(), 1, 0)))}
	return y, entry, nil
}

// paddedRows returns input [N, I..., C] padded by pads (one extra zero
// example at the end among them) and flattened to [(N+1)·P, C], the
// operand of a channels-last shifted convolution: from cache when a
// convolution on the same function built it already, else built and
// added to cache (nil: none kept). The input gradient of a 28×28 "same"
// convolution pads the output gradient exactly so, and its kernel
// gradient reads the same rows at an offset (gradientRows), one Pad for
// both.
func paddedRows(f compute.Function, cache patchCache, input, zero compute.Value, pads []compute.PadAxis,
	rows, c int) (compute.Value, error) {
	key := paddedRowsKey(input, pads)
	if entry, ok := cache[key]; ok && cache != nil {
		return entry.shiftInputRows, nil
	}
	x, err := f.Pad(input, zero, pads...)
	if err != nil {
		return nil, err
	}
	if x, err = f.Reshape(x, rows, c); err != nil {
		return nil, err
	}
	if cache != nil {
		cache[key] = patchEntry{shiftInputRows: x}
	}
	return x, nil
}

// paddedRowsKey is the cache key of paddedRows' rows of input.
func paddedRowsKey(input compute.Value, pads []compute.PadAxis) patchKey {
	return patchKey{input: input, geometry: fmt.Sprint("rows", pads)}
}
