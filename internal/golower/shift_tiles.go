package golower

import (
	"github.com/gomlx/compute"
)

// Shifted convolutions in cache-sized tiles.
//
// A shifted convolution's patches [K, C, N·P] are K·C times the image
// grid: 33 MB for examples/resnet's 16-channel 3×3 convolutions at 28×28
// and batch 64, more than the last-level cache. Built whole, the Gather
// writes them to memory and the product's packing reads them back; kept
// for the kernel gradient, they are read from memory a third time, long
// after. With Lowering.ShiftTileBytes (DefaultShiftTileBytes) the N·P axis
// is cut into tiles whose patches fit it, each gathered and multiplied at
// once, so the product packs patches the Gather has just written; the
// products [Co, N·P/T] are concatenated. The kernel gradient gathers each
// tile's patches again from the padded input (kept instead of the
// patches: K·C times smaller) and sums the tiles' products with the
// matching rows of the output gradient. BenchmarkResNetConvs compares the
// network's convolutions with tiles and without (Lowering.ShiftTileBytes
// -1); the tiles pay only where the backend runs them side by side (see
// internal/engine's loweringFor).

// DefaultShiftTileBytes bounds the patches of one tile of a shifted
// convolution when a Lowering leaves ShiftTileBytes at zero: half of a
// core's L2 cache on the machines measured. BenchmarkResNetConvs read 256
// KiB, 512 KiB and 1 MiB tiles alike (0.89–0.92× the CPU time of whole
// patches at one thread, 0.70–0.73× the wall time at two), 2 MiB at 0.95×
// and 1.15×.
const DefaultShiftTileBytes = 512 << 10

// MinShiftTileRatio is the least ratio of a shifted convolution's patch
// rows (K·C) to its output channels (Co) that is tiled.
const MinShiftTileRatio = 2

// shiftTileCount is the number of tiles of a shifted convolution whose
// whole patches take patchBytes, with patchRows = K·C rows against
// outChannels = Co rows of output: 1 when Lowering.ShiftTileBytes is
// negative, the patches fit one tile, or they have fewer than
// MinShiftTileRatio times the output's rows. Tiles add a Concatenate of the
// output and a Slice of the output gradient, which the patches' locality
// pays for only when the patches are the larger: examples/cnn's first
// convolution (K·C = 9, Co = 32) in tiles measured 1.2× the step's CPU
// time in BenchmarkCNNPaired (before this rule; since it, nothing in that
// network is tiled).
func (l Lowering) shiftTileCount(patchBytes, patchRows, outChannels int) int {
	limit := l.ShiftTileBytes
	if limit == 0 {
		limit = DefaultShiftTileBytes
	}
	if limit < 0 || patchBytes <= limit || patchRows < MinShiftTileRatio*outChannels {
		return 1
	}
	return (patchBytes + limit - 1) / limit
}

// shiftTile is one tile of the N·P axis: [start, start+size).
type shiftTile struct{ start, size int }

// shiftTilesOf cuts grid positions into count tiles of nearly equal size.
func shiftTilesOf(grid, count int) []shiftTile {
	count = max(1, min(count, grid))
	tiles := make([]shiftTile, count)
	for t := range tiles {
		start, end := t*grid/count, (t+1)*grid/count
		tiles[t] = shiftTile{start, end - start}
	}
	return tiles
}

// gatherShiftTile gathers the patches [K, C, tile.size] of one tile from
// the flattened, padded, channels-first input x [C, (N+1)·P].
func gatherShiftTile(f compute.Function, x compute.Value, offsets []int32, c int, tile shiftTile) (compute.Value, error) {
	starts := make([]int32, len(offsets))
	for i, offset := range offsets {
		starts[i] = offset + int32(tile.start)
	}
	startIndices, err := f.Constant(starts, len(offsets), 1)
	if err != nil {
		return nil, err
	}
	return f.Gather(x, startIndices, 1, []int{1, 2}, nil, []int{1}, []int{c, tile.size}, true)
}

// shiftTilesTimesKernel is shiftPatchesTimesKernel in tiles: the product
// [Co, N·P] of the kernel w [Co, K, C] and the patches of x, one tile at
// a time.
func shiftTilesTimesKernel(f compute.Function, x, w compute.Value, offsets []int32, c int,
	tiles []shiftTile) (compute.Value, error) {
	parts := make([]compute.Value, len(tiles))
	for t, tile := range tiles {
		patches, err := gatherShiftTile(f, x, offsets, c, tile)
		if err != nil {
			return nil, err
		}
		if parts[t], err = f.DotGeneral(w, []int{1, 2}, nil, patches, []int{0, 1}, nil, compute.DotGeneralConfig{}); err != nil {
			return nil, err
		}
	}
	return f.Concatenate(1, parts...)
}

// shiftTilesTimesGradient is shiftPatchesTimesGradient for tiled patches:
// Σ_t patches_t · dy[offset + tile t] with dy [offset + N·P (or more),
// Co], as [K, C, Co].
func shiftTilesTimesGradient(f compute.Function, entry patchEntry, dy compute.Value, co, offset int) (compute.Value, error) {
	var sum compute.Value
	for _, tile := range entry.shiftTiles {
		patches, err := gatherShiftTile(f, entry.shiftInput, entry.shiftOffsets, entry.shiftChannels, tile)
		if err != nil {
			return nil, err
		}
		rows, err := rowRange(f, dy, shiftTile{offset + tile.start, tile.size}, co)
		if err != nil {
			return nil, err
		}
		r, err := f.DotGeneral(patches, []int{2}, nil, rows, []int{0}, nil, compute.DotGeneralConfig{})
		if err != nil {
			return nil, err
		}
		if sum == nil {
			sum = r
		} else if sum, err = f.Add(sum, r); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

// rowRange returns the rows [tile.start, tile.start+tile.size) of x
// [rows, cols] as one Gather of a single run: the Go backend's Slice
// copies element by element, its Gather copies the run with one memmove.
// On examples/resnet's step (two tiled 28×28 convolutions, 64 tiles each)
// the Gathers took 0.973× the wall time of the Slices at one thread and
// 0.977× at two (paired in one process, 20 steps).
func rowRange(f compute.Function, x compute.Value, tile shiftTile, cols int) (compute.Value, error) {
	start, err := f.Constant([]int32{int32(tile.start)}, 1)
	if err != nil {
		return nil, err
	}
	rows, err := f.Gather(x, start, 0, []int{0, 1}, nil, []int{0}, []int{tile.size, cols}, true)
	if err != nil {
		return nil, err
	}
	return rows, nil
}
