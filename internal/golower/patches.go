package golower

import (
	"slices"

	"github.com/gomlx/compute"
)

// patchesTimesKernel gathers the patches of x = [N, I..., C] and multiplies
// them by the kernel [K..., C/groups, Co], returning [N, O..., Co]. By
// default one Gather builds the patches (gatherTimesKernel); with
// SlicePatches they come from whichever is fewer: one strided slice per kernel
// position (each covering every output position; the forward convolution
// and the gradient with respect to the input) or one dilated slice per
// output position (each covering the whole kernel window; the gradient with
// respect to the kernel, whose "kernel" is the output gradient). A
// non-nil key adds the gathered patches to the cache under it.
func (b *emitter) patchesTimesKernel(x, k compute.Value, batch int, spatial, outSpatial []int,
	g geometry, key *patchKey) (compute.Value, error) {
	if !b.slicePatches {
		return b.gatherTimesKernel(x, k, batch, outSpatial, g, key)
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

// gatherTimesKernel gathers the patch matrix [N, O..., K..., C] of
// x = [N, I..., C] with one Gather and multiplies it by the kernel
// [K..., C/groups, Co], returning [N, O..., Co]. Spatial axes without
// kernel dilation take their whole window in each gathered slice (so
// that, for the last one, K·C values are copied as one run); the others
// enumerate their kernel positions in the start indices.
func (b *emitter) gatherTimesKernel(x, k compute.Value, batch int, outSpatial []int,
	g geometry, key *patchKey) (compute.Value, error) {
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
	if key != nil && b.cache != nil {
		b.cache[*key] = patchEntry{patches: patches, outSpatial: slices.Clone(outSpatial)}
	}
	if g.groups == 1 {
		// P [N, O..., K..., C] contracts its trailing axes with the leading
		// ones of the kernel [K..., C, Co], as they are: the Go backend
		// copies a Reshape of a value with other users (the kept patches).
		contractP, contractK := make([]int, n+1), make([]int, n+1)
		for i := range n + 1 {
			contractP[i], contractK[i] = 1+n+i, i
		}
		return b.f.DotGeneral(patches, contractP, nil, k, contractK, nil, compute.DotGeneralConfig{})
	}
	numOut, numKernel := prod(outSpatial), prod(g.kernelSize)
	y, err := b.matmul(patches, k, false, batch*numOut, numKernel, g)
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
