package golower

import (
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
)

// Shifted convolutions with their batch split for the matmul's workers.
//
// The Go backend's matmul parallelises a product without batch axes by
// cutting its output into blocks, one per work item, and each item packs
// the whole of the operand it does not cut. The kernel gradient of a
// shifted convolution, dw[K·C, Co] = patches[K·C, N·P] · dy[N·P, Co], has
// a small output and a long contraction: its rows are cut into four items
// on two cores (examples/resnet: 144 rows, Co = 16), and each packs all of
// dy, 16 columns padded to the kernel's 32 by the backend's generic Go
// packing, so the product took as long on two cores as on one.
//
// With S > 1 (Lowering.ShiftSplit) the N·P axis is cut into S blocks of
// whole images, which become a leading batch axis: the Gather builds the
// patches as [S, K, C, N·P/S] (runs of N·P/S values instead of N·P, the
// same bytes in another order), the forward product is batched with the
// kernel broadcast to each block, [S, Co, N·P/S], and moved back to
// [Co, N·P] by a Transpose that copies whole runs, and the kernel
// gradient is S products [S, K·C, Co] summed over S. The matmul then
// gives each worker whole blocks, and each operand is packed once.

// DefaultShiftSplit is the number of blocks a shifted convolution's batch
// is cut into when a Lowering leaves ShiftSplit at zero. It is a constant,
// not the number of cores: the kernel gradient sums the blocks' products,
// so the split decides the order of its sums, and a program must compute
// the same bits on a machine with another number of cores (a run resumed
// there included). Until 2026-12-05 it was GOMAXPROCS, and
// examples/resnet's weights after 8 steps differed at GOMAXPROCS 1 and 2
// (TestBitsDoNotDependOnCores). BenchmarkResNetConvs read splits of
// GOMAXPROCS, 1, 2 and 4 within 3% of each other at one and two threads
// (with the shift tiles that now take the largest convolutions).
const DefaultShiftSplit = 4

// shiftSplit is the number of blocks the batch of a shifted convolution is
// cut into: Lowering.ShiftSplit, or DefaultShiftSplit, lowered to the
// largest divisor of batch.
func (l Lowering) shiftSplit(batch int) int {
	s := l.ShiftSplit
	if s == 0 {
		s = DefaultShiftSplit
	}
	s = max(1, min(s, batch))
	for batch%s != 0 {
		s--
	}
	return s
}

// shiftPatchesTimesKernel gathers the patches of the channels-first,
// flattened, padded input x [C, (N+1)·P] at the kernel offsets and
// multiplies them by the kernel w [Co, K, C], returning the patches
// ([K, C, N·P], or [S, K, C, N·P/S] for split > 1) and the product
// [Co, N·P].
func (b *emitter) shiftPatchesTimesKernel(x, w compute.Value, offsets []int32, c, co, grid, split int) (
	patches, y compute.Value, err error) {
	numKernel := len(offsets)
	if split <= 1 {
		startIndices, err := b.f.Constant(offsets, numKernel, 1)
		if err != nil {
			return nil, nil, err
		}
		patches, err = b.f.Gather(x, startIndices, 1, []int{1, 2}, nil, []int{1}, []int{c, grid}, true)
		if err != nil {
			return nil, nil, err
		}
		y, err = b.f.DotGeneral(w, []int{1, 2}, nil, patches, []int{0, 1}, nil, compute.DotGeneralConfig{})
		return patches, y, err
	}
	block := grid / split
	starts := make([]int32, 0, split*numKernel)
	for s := range split {
		for _, offset := range offsets {
			starts = append(starts, int32(s*block)+offset)
		}
	}
	startIndices, err := b.f.Constant(starts, split, numKernel, 1)
	if err != nil {
		return nil, nil, err
	}
	if patches, err = b.f.Gather(x, startIndices, 2, []int{2, 3}, nil, []int{1}, []int{c, block}, true); err != nil {
		return nil, nil, err
	}
	wb, err := b.f.BroadcastInDim(w, shapes.Make(b.dtype, split, co, numKernel, c), []int{1, 2, 3})
	if err != nil {
		return nil, nil, err
	}
	if y, err = b.f.DotGeneral(wb, []int{2, 3}, []int{0}, patches, []int{1, 2}, []int{0}, compute.DotGeneralConfig{}); err != nil {
		return nil, nil, err
	}
	// [S, Co, N·P/S] to [Co, S, N·P/S]: whole runs of N·P/S.
	if y, err = b.f.Transpose(y, 1, 0, 2); err != nil {
		return nil, nil, err
	}
	y, err = b.f.Reshape(y, co, grid)
	return patches, y, err
}

// shiftPatchesTransposedProduct is shiftPatchesTimesKernel for a
// convolution with fewer patch rows K·C than output channels Co (a first
// layer on one input channel: examples/resnet's stem, 9 rows against 16,
// examples/cnn's first convolution, 9 against 32). The product
// [Co, N·P] would have to be moved to channels-last afterwards, a
// Transpose of Co·N·P values; it moves the patches instead, K·C·N·P
// values: y[N·P, Co] = patchesᵀ[N·P, K·C] · w[K·C, Co], the layout the
// matmul takes as it is, and channels-last already. The patches are
// gathered as [K·C, N·P] (one run of N·P values per kernel position and
// channel, as shiftPatchesTimesKernel's), so that the 2D Transpose needs
// no Reshape of them (which the Go backend would copy: the kernel
// gradient also uses them), and the batch is not split (split.go). On
// the stem's shape the output and the input gradient came out bit for bit
// those of the untransposed product; the kernel gradient, one contraction
// over N·P instead of four blocks' products summed, differs in the last
// bits (TestTransposedProductMatchesDirect compares all three with the
// direct convolution). BenchmarkCNNPaired/transposed-product read the
// CNN's step at 0.93× the wall time at one thread and 0.99× at two,
// BenchmarkResNetStepPaired/transposed-product the ResNet's at 1.00× and
// 0.98×. Lowering.NoTransposedProducts keeps the product [Co, N·P].
func (b *emitter) shiftPatchesTransposedProduct(x, w compute.Value, offsets []int32, c, co, grid int) (
	patches, y compute.Value, err error) {
	numKernel := len(offsets)
	// Start indices (c, s_k) for each kernel position k and channel c, in
	// the patches' (k, c) order.
	starts := make([]int32, 0, 2*numKernel*c)
	for _, offset := range offsets {
		for ch := range c {
			starts = append(starts, int32(ch), offset)
		}
	}
	startIndices, err := b.f.Constant(starts, numKernel*c, 2)
	if err != nil {
		return nil, nil, err
	}
	if patches, err = b.f.Gather(x, startIndices, 1, []int{1}, []int{0}, []int{0, 1}, []int{1, grid}, true); err != nil {
		return nil, nil, err
	}
	pt, err := b.f.Transpose(patches, 1, 0)
	if err != nil {
		return nil, nil, err
	}
	// w [Co, K, C] as [K·C, Co].
	wt, err := b.f.Reshape(w, co, numKernel*c)
	if err != nil {
		return nil, nil, err
	}
	if wt, err = b.f.Transpose(wt, 1, 0); err != nil {
		return nil, nil, err
	}
	y, err = b.f.DotGeneral(pt, []int{1}, nil, wt, []int{0}, nil, compute.DotGeneralConfig{})
	return patches, y, err
}

// shiftPatchesTimesGradient multiplies the patches of
// shiftPatchesTimesKernel by the padded, flattened output gradient
// dy [N·P, Co], returning the kernel gradient [K·C, Co] (in whichever
// shape: the caller reshapes it).
func shiftPatchesTimesGradient(f compute.Function, entry patchEntry, dy compute.Value, grid, co int) (compute.Value, error) {
	if entry.shiftTiles != nil {
		return shiftTilesTimesGradient(f, entry, dy, co, 0)
	}
	if entry.shiftSplit <= 1 {
		// [K, C, N·P], or [K·C, N·P] from shiftPatchesTransposedProduct.
		shape, err := f.Shape(entry.patches)
		if err != nil {
			return nil, err
		}
		return f.DotGeneral(entry.patches, []int{shape.Rank() - 1}, nil, dy, []int{0}, nil, compute.DotGeneralConfig{})
	}
	dy, err := f.Reshape(dy, entry.shiftSplit, grid/entry.shiftSplit, co)
	if err != nil {
		return nil, err
	}
	r, err := f.DotGeneral(entry.patches, []int{3}, []int{0}, dy, []int{1}, []int{0}, compute.DotGeneralConfig{})
	if err != nil {
		return nil, err
	}
	return f.ReduceSum(r, 0)
}
