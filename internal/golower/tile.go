package golower

import (
	"slices"

	"github.com/gomlx/compute"
)

// tiled runs the convolution of the padded canonical input x = [N, I..., C]
// in tiles whose patch matrix fits maxPatchBytes: first along the batch,
// then, one example at a time, along the first output spatial axis.
func (b *emitter) tiled(x, k compute.Value, batch int, spatial []int, g geometry) (compute.Value, error) {
	key := b.pending
	b.pending = nil
	outSpatial := make([]int, len(spatial))
	for i := range spatial {
		outSpatial[i] = outputSize(spatial[i], g.kernelSize[i], g.kernelDilations[i], g.strides[i])
	}
	perExample := prod(outSpatial) * prod(g.kernelSize) * g.inChannels * b.dtype.Size()
	if batch*perExample <= b.maxPatchBytes || len(spatial) == 0 {
		return b.patchesTimesKernel(x, k, batch, spatial, outSpatial, g, key)
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
		return b.patchesTimesKernel(x, k, batch, spatial, outSpatial, g, nil)
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
		y, err := b.patchesTimesKernel(part, k, batch, bandSpatial, bandOut, g, nil)
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
