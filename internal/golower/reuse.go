package golower

import (
	"fmt"
	"slices"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
)

// Kernel gradients from the forward convolution's patches.
//
// GoMLX's gradient of a convolution y = conv(x, w) with respect to the
// kernel is another convolution of the same x, with batch and channels
// swapped, the output gradient dy as its "kernel", the forward strides as
// kernel dilations and the forward kernel dilations as strides (see
// convVJPWrtKernel in gomlx/core/graph). Lowered as is, it transposes x
// and dy and gathers a patch matrix holding the very values of the forward
// convolution's patch matrix P = [N, O..., K..., C]:
//
//	dw[k, c, co] = Σ_{n,o} P[n, o, k, c] · dy[n, o, co]
//
// So when a convolution on the same function has the same input value and
// that "reverse" geometry of a forward convolution already lowered there,
// it is emitted as one DotGeneral of dy (transposed to [Co, N·O]) with the
// forward's P (as [N·O, K·C], the layout the Go backend's matmul takes
// without a copy): no Transpose of x, no Pad, no Gather. The price is
// memory: P stays alive from the forward pass to the backward pass.
//
// This is an identity of the two sums, not a recognition of GoMLX's VJP:
// any convolution of x whose output positions play the forward's kernel
// positions (and whose kernel positions the forward's output positions)
// reads the same padded input elements at the same indices, whatever its
// high-side padding (only the low-side padding shifts the indices).

// patchKey names the patches of one input value under one geometry.
type patchKey struct {
	input compute.Value
	// geometry: the canonical permutation [batch, spatial..., channels] of
	// the input, kernel size, strides, kernel and input dilations and
	// low-side paddings, per spatial axis.
	geometry string
}

// patchEntry is a patch matrix built by a forward convolution.
type patchEntry struct {
	patches    compute.Value // [N, O..., K..., C], or [K..., C, N·P] from shiftConv
	outSpatial []int         // O per spatial axis
	// shiftPadded is the padded input size per spatial axis of patches
	// built by shiftConv (shift.go); nil for gatherTimesKernel's.
	shiftPadded []int
	// shiftSplit is the number of batch blocks of shiftConv's patches
	// (split.go); 0 or 1: none.
	shiftSplit int
	// shiftTiles, when set, are the tiles of a shifted convolution built in
	// tiles (shift_tiles.go): patches is nil, and the kernel gradient
	// gathers each tile again from shiftInput ([C, (N+1)·P]) at
	// shiftOffsets, with shiftChannels channels.
	shiftTiles    []shiftTile
	shiftInput    compute.Value
	shiftOffsets  []int32
	shiftChannels int
	// shiftInputRows, when set, is the padded input of a channels-last
	// shifted convolution (shift_cl.go) as [(N+1)·P, C]; the kernel
	// gradient moves it to shiftInput first.
	shiftInputRows compute.Value
}

// patchCache holds the patch matrices built on one function. It is only
// used from the goroutine building that function's graph.
type patchCache map[patchKey]patchEntry

// patchGeometry is the key's geometry string.
func patchGeometry(perm, kernelSize, strides, kernelDilations, inputDilations, lowPads []int) string {
	return fmt.Sprint(perm, kernelSize, strides, kernelDilations, inputDilations, lowPads)
}

// lowPaddings returns the low-side padding per spatial axis (0 where
// paddings is empty).
func lowPaddings(paddings [][2]int, n int) []int {
	low := make([]int, n)
	for i := range low {
		if len(paddings) > 0 {
			low[i] = paddings[i][0]
		}
	}
	return low
}

// reverseFromPatches emits the convolution as a DotGeneral of its kernel
// with the patches of an earlier forward convolution of the same input
// (see above), or returns ok=false when cache holds no such patches.
func reverseFromPatches(f compute.Function, cache patchCache, input, kernel compute.Value, kernelShape,
	outputShape shapes.Shape, axes compute.ConvolveAxesConfig, strides []int, paddings [][2]int,
	inputDilations, kernelDilations []int, groups, batchGroups int) (y compute.Value, ok bool, err error) {
	if cache == nil || groups != 1 || batchGroups != 1 {
		return nil, false, nil
	}
	n := len(axes.InputSpatial)
	// The forward convolution this one reverses: batch and channels
	// swapped, this one's output positions as its kernel positions.
	perm := append(append([]int{axes.InputChannels}, axes.InputSpatial...), axes.InputBatch)
	kernelSize := make([]int, n)
	for i, axis := range axes.OutputSpatial {
		kernelSize[i] = outputShape.Dimensions[axis]
	}
	key := patchKey{input: input, geometry: patchGeometry(perm, kernelSize, perAxis(kernelDilations, n),
		perAxis(strides, n), perAxis(inputDilations, n), lowPaddings(paddings, n))}
	entry, found := cache[key]
	if !found {
		return nil, false, nil
	}
	for i, axis := range axes.KernelSpatial {
		if kernelShape.Dimensions[axis] != entry.outSpatial[i] {
			return nil, false, nil
		}
	}
	if entry.shiftInput == nil && entry.shiftInputRows != nil {
		if entry.shiftInput, err = f.Transpose(entry.shiftInputRows, 1, 0); err != nil {
			return nil, false, err
		}
		cache[key] = entry
	}
	if entry.shiftPadded != nil {
		inShape, err := f.Shape(input)
		if err != nil {
			return nil, false, err
		}
		inSpatial := make([]int, n)
		for i, axis := range axes.InputSpatial {
			inSpatial[i] = inShape.Dimensions[axis]
		}
		// This convolution's strides are the forward's kernel dilations.
		y, err := reverseFromShiftPatches(f, cache, entry, kernel, kernelShape, outputShape, axes, kernelSize,
			inSpatial, lowPaddings(paddings, n), perAxis(strides, n))
		if err != nil {
			return nil, false, err
		}
		if got, err := f.Shape(y); err != nil || !got.Equal(outputShape) {
			return nil, false, fmt.Errorf("golower: convolution from reused patches has shape %s, want %s (err=%v)",
				got, outputShape, err)
		}
		return y, true, nil
	}
	// dy as [Co, N, O...]: the matmul's LHS, contracting its trailing axes.
	kPerm := append([]int{axes.KernelOutputChannels, axes.KernelInputChannels}, axes.KernelSpatial...)
	lhs, err := transposeIfNeeded(f, kernel, kPerm)
	if err != nil {
		return nil, false, err
	}
	// dy [Co, N, O...] contracts its trailing axes with the leading ones of
	// P [N, O..., K..., C], both as they are: the Go backend copies a
	// Reshape of a value that has other users, and both have.
	contractLHS, contractRHS := make([]int, n+1), make([]int, n+1)
	for i := range n + 1 {
		contractLHS[i], contractRHS[i] = 1+i, i
	}
	// r is [Co, K..., C]: the output's channels, spatial axes and batch.
	r, err := f.DotGeneral(lhs, contractLHS, nil, entry.patches, contractRHS, nil, compute.DotGeneralConfig{})
	if err != nil {
		return nil, false, err
	}
	outPerm := make([]int, n+2)
	outPerm[axes.OutputChannels] = 0
	for i, axis := range axes.OutputSpatial {
		outPerm[axis] = 1 + i
	}
	outPerm[axes.OutputBatch] = n + 1
	if y, err = transposeIfNeeded(f, r, outPerm); err != nil {
		return nil, false, err
	}
	if got, err := f.Shape(y); err != nil || !got.Equal(outputShape) {
		return nil, false, fmt.Errorf("golower: convolution from reused patches has shape %s, want %s (err=%v)",
			got, outputShape, err)
	}
	return y, true, nil
}

// transposeIfNeeded is fastTranspose of x: nothing for the identity
// permutation, a 2D transpose for a rotation of the axes.
func transposeIfNeeded(f compute.Function, x compute.Value, perm []int) (compute.Value, error) {
	if slices.Equal(perm, identityPerm(len(perm))) {
		return x, nil
	}
	shape, err := f.Shape(x)
	if err != nil {
		return nil, err
	}
	return fastTranspose(f, x, shape.Dimensions, perm)
}

func identityPerm(n int) []int {
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	return perm
}
