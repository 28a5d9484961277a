package mnist

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/voltml/volt/data"
)

// Dataset is a MNIST split: each example has one input, the image as 784
// float32 pixels in [0, 1] (pixel/255, shape [784]), and one label, the digit
// as an int32 scalar. It implements data.Dataset and data.BatchGetter; batches
// have inputs of shape [B, 784] float32 and labels of shape [B] int32.
// A Dataset is read-only and safe for concurrent use.
type Dataset struct {
	pixels []uint8 // ImageSize bytes per example, starting at example `from`
	labels []uint8
	from   int // first example of this view in pixels/labels
	n      int // number of examples of this view
}

var (
	_ data.Dataset     = (*Dataset)(nil)
	_ data.BatchGetter = (*Dataset)(nil)
)

// pixelScale maps a pixel byte to its float32 value in [0, 1].
var pixelScale = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(i) / 255
	}
	return t
}()

// Len returns the number of examples.
func (d *Dataset) Len() int { return d.n }

// Get returns example i, or an error when i is outside [0, Len()).
func (d *Dataset) Get(i int) (data.Example, error) {
	if err := d.check(i); err != nil {
		return data.Example{}, err
	}
	img := make([]float32, ImageSize)
	d.fillImage(img, i)
	return data.Example{
		Inputs: []data.Field{{Value: img, Shape: []int{ImageSize}}},
		Labels: []data.Field{{Value: int32(d.labels[d.from+i])}},
	}, nil
}

// GetBatch returns the batch of the examples at idx, in that order: inputs
// [len(idx), 784] float32 and labels [len(idx)] int32, written directly into
// the tensors. It returns an error when idx is empty or an index is outside
// [0, Len()).
func (d *Dataset) GetBatch(idx []int) (*data.Batch, error) {
	if len(idx) == 0 {
		return nil, fmt.Errorf("mnist.Dataset.GetBatch: no indices")
	}
	for _, i := range idx {
		if err := d.check(i); err != nil {
			return nil, err
		}
	}
	images := tensors.FromShape(shapes.Make(dtypes.Float32, len(idx), ImageSize))
	labels := tensors.FromShape(shapes.Make(dtypes.Int32, len(idx)))
	err := tensors.MutableFlatData(images, func(flat []float32) {
		for k, i := range idx {
			d.fillImage(flat[k*ImageSize:(k+1)*ImageSize], i)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("mnist.Dataset.GetBatch: %w", err)
	}
	err = tensors.MutableFlatData(labels, func(flat []int32) {
		for k, i := range idx {
			flat[k] = int32(d.labels[d.from+i])
		}
	})
	if err != nil {
		return nil, fmt.Errorf("mnist.Dataset.GetBatch: %w", err)
	}
	return &data.Batch{Inputs: []*tensors.Tensor{images}, Labels: []*tensors.Tensor{labels}, Size: len(idx)}, nil
}

// Subset returns the examples [from, to) of d as a Dataset sharing d's
// memory; e.g. train.Subset(0, 55000) and train.Subset(55000, 60000) split
// the train set into train and validation.
//
// It panics when the range is invalid, i.e. unless 0 <= from <= to <= Len().
func (d *Dataset) Subset(from, to int) *Dataset {
	if from < 0 || to < from || to > d.n {
		panic(fmt.Sprintf("mnist.Dataset.Subset: range [%d, %d) invalid for a dataset of length %d, "+
			"want 0 <= from <= to <= %d", from, to, d.n, d.n))
	}
	return &Dataset{pixels: d.pixels, labels: d.labels, from: d.from + from, n: to - from}
}

// check returns an error when i is outside [0, Len()).
func (d *Dataset) check(i int) error {
	if i < 0 || i >= d.n {
		return fmt.Errorf("mnist.Dataset: index %d out of range [0, %d)", i, d.n)
	}
	return nil
}

// fillImage writes the float32 pixels of example i into dst (ImageSize long).
func (d *Dataset) fillImage(dst []float32, i int) {
	src := d.pixels[(d.from+i)*ImageSize : (d.from+i+1)*ImageSize]
	for j, p := range src {
		dst[j] = pixelScale[p]
	}
}
