package volt

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/data"
)

// batchDTypes holds the dtypes of the first batch a loader gave in a run,
// by the batch's DataloaderIdx (a sequential CombinedLoader's loaders may
// differ). A later batch with another dtype in some input or label is
// refused: volt would silently retrace the step for it (a float64 batch
// in a float32 epoch would train in float64 against float32 weights cast
// up), where PyTorch fails in the first layer ("mat1 and mat2 must have
// the same dtype"). It is almost always a data bug (one sample built from
// a float64 slice), and a compile per dtype besides. Shapes may change
// (the last batch, variable lengths).
type batchDTypes struct {
	first map[int]firstDTypes
}

type firstDTypes struct {
	batchIdx       int
	inputs, labels []dtypes.DType
}

// check records b's dtypes if it is the first batch of its loader, or
// compares them with the first batch's and says what differs (the caller
// names the loader and the batch).
func (d *batchDTypes) check(b *data.Batch, batchIdx int) error {
	if d.first == nil {
		d.first = map[int]firstDTypes{}
	}
	f, ok := d.first[b.DataloaderIdx]
	if !ok {
		d.first[b.DataloaderIdx] = firstDTypes{batchIdx: batchIdx, inputs: dtypesOf(b.Inputs), labels: dtypesOf(b.Labels)}
		return nil
	}
	if err := sameDTypes("input", b.Inputs, f.inputs, f.batchIdx); err != nil {
		return err
	}
	return sameDTypes("label", b.Labels, f.labels, f.batchIdx)
}

// sameDTypes compares a batch's tensors (inputs or labels: what) with the
// dtypes of the loader's first batch, firstIdx.
func sameDTypes(what string, got []*tensors.Tensor, want []dtypes.DType, firstIdx int) error {
	for i := range min(len(got), len(want)) {
		if g := got[i]; g != nil && g.DType() != want[i] {
			return fmt.Errorf("%s %d is %s, but it was %s in batch %d of this run; "+
				"every batch must have the same dtypes (PyTorch's nn.Linear raises \"mat1 and mat2 must have the same dtype\"): "+
				"convert it in the dataset or the collate function", what, i, g.DType(), want[i], firstIdx)
		}
	}
	return nil
}

func dtypesOf(ts []*tensors.Tensor) []dtypes.DType {
	out := make([]dtypes.DType, len(ts))
	for i, t := range ts {
		if t != nil {
			out[i] = t.DType()
		}
	}
	return out
}
