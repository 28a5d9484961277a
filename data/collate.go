package data

import (
	"fmt"
	"slices"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
)

// Batch is a collated batch: host tensors with a leading batch axis of Size.
type Batch struct {
	Inputs, Labels []*tensors.Tensor
	Size           int
	// Parts describes a batch combined from several loaders by a
	// CombinedLoader: Inputs and Labels are the parts' inputs and labels
	// concatenated in part order; nil for an ordinary batch.
	Parts []Part
	// DataloaderIdx is the index of the loader a Sequential CombinedLoader
	// took this batch from (0 otherwise).
	DataloaderIdx int
	// StreamState is the position of a stream after this batch, set by a
	// DataLoader or StreamShard over a StatefulIterable (nil otherwise):
	// WithStreamState resumes the stream after it. volt.Trainer saves the
	// last trained batch's in its checkpoints.
	StreamState []byte
}

// Collator turns examples into a batch.
type Collator func(examples []Example) (*Batch, error)

// DefaultCollate stacks each Field position into a tensor of shape
// [len(examples), Shape...] with the field's dtype. It returns an error,
// naming the example index and the field position, when the number of
// fields, their shapes or their dtypes differ between examples.
func DefaultCollate(examples []Example) (*Batch, error) {
	if len(examples) == 0 {
		return nil, fmt.Errorf("data.DefaultCollate: no examples to collate")
	}
	inputs, err := collateFields(examples, "Inputs", func(e *Example) []Field { return e.Inputs })
	if err != nil {
		return nil, err
	}
	labels, err := collateFields(examples, "Labels", func(e *Example) []Field { return e.Labels })
	if err != nil {
		return nil, err
	}
	return &Batch{Inputs: inputs, Labels: labels, Size: len(examples)}, nil
}

// collateFields stacks the fields selected by get (kind names them in errors).
func collateFields(examples []Example, kind string, get func(e *Example) []Field) ([]*tensors.Tensor, error) {
	numFields := len(get(&examples[0]))
	for i := range examples {
		if n := len(get(&examples[i])); n != numFields {
			return nil, fmt.Errorf("data.DefaultCollate: example %d has %d %s fields, example 0 has %d",
				i, n, kind, numFields)
		}
	}
	out := make([]*tensors.Tensor, numFields)
	for pos := range numFields {
		t, err := stackField(examples, kind, pos, get)
		if err != nil {
			return nil, err
		}
		out[pos] = t
	}
	return out, nil
}

// stackField builds the [B, Shape...] tensor of field position pos.
func stackField(examples []Example, kind string, pos int, get func(e *Example) []Field) (*tensors.Tensor, error) {
	dtype, shape, err := get(&examples[0])[pos].Describe()
	if err != nil {
		return nil, fmt.Errorf("data.DefaultCollate: example 0 %s[%d]: %w", kind, pos, err)
	}
	values := make([]any, len(examples))
	for i := range examples {
		f := get(&examples[i])[pos]
		dt, sh, err := f.Describe()
		if err != nil {
			return nil, fmt.Errorf("data.DefaultCollate: example %d %s[%d]: %w", i, kind, pos, err)
		}
		if dt != dtype {
			return nil, fmt.Errorf("data.DefaultCollate: example %d %s[%d]: dtype %s differs from example 0 dtype %s",
				i, kind, pos, dt, dtype)
		}
		if !slices.Equal(sh, shape) {
			return nil, fmt.Errorf("data.DefaultCollate: example %d %s[%d]: shape %v differs from example 0 shape %v",
				i, kind, pos, sh, shape)
		}
		values[i] = f.Value
	}
	dims := append([]int{len(examples)}, shape...)
	t := tensors.FromShape(shapes.Make(dtype, dims...))
	stride := shapeSize(shape)
	err = t.MutableFlatData(func(flat any) {
		switch dst := flat.(type) {
		case []float32:
			fillFlat(dst, values, stride)
		case []float64:
			fillFlat(dst, values, stride)
		case []int32:
			fillFlat(dst, values, stride)
		case []int64:
			fillFlat(dst, values, stride)
		case []uint8:
			fillFlat(dst, values, stride)
		case []bool:
			fillFlat(dst, values, stride)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("data.DefaultCollate: %s[%d]: %w", kind, pos, err)
	}
	return t, nil
}

// fillFlat copies each value (a []T, a T or, for int32 tensors, an int) into
// consecutive blocks of stride elements of dst.
func fillFlat[T any](dst []T, values []any, stride int) {
	for i, v := range values {
		block := dst[i*stride : (i+1)*stride]
		switch x := v.(type) {
		case []T:
			copy(block, x)
		case T:
			block[0] = x
		case int:
			if p, ok := any(&block[0]).(*int32); ok {
				*p = int32(x)
			}
		}
	}
}
