package checkpoint

import (
	"fmt"
	"slices"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
)

// FromGoMLX returns a Tensor named name holding a copy of t's values. It
// transfers t from the device if needed; t must have a supported dtype.
func FromGoMLX(name string, t *tensors.Tensor) (Tensor, error) {
	if t == nil {
		return Tensor{}, fmt.Errorf("tensor %q: the GoMLX tensor is nil", name)
	}
	if err := t.CheckValid(); err != nil {
		return Tensor{}, fmt.Errorf("tensor %q: %w", name, err)
	}
	shape := t.Shape()
	if _, err := DTypeName(shape.DType); err != nil {
		return Tensor{}, fmt.Errorf("tensor %q: %w", name, err)
	}
	out := Tensor{Name: name, DType: shape.DType, Shape: slices.Clone(shape.Dimensions)}
	if out.Shape == nil {
		out.Shape = []int{}
	}
	err := t.ConstBytes(func(data []byte) { out.Data = slices.Clone(data) })
	if err != nil {
		return Tensor{}, fmt.Errorf("tensor %q: reading GoMLX tensor: %w", name, err)
	}
	if out.Data == nil {
		out.Data = []byte{}
	}
	if err := out.validate(); err != nil {
		return Tensor{}, err
	}
	return out, nil
}

// ToGoMLX returns a new local GoMLX tensor holding a copy of t's values.
func (t Tensor) ToGoMLX() (*tensors.Tensor, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	gt := tensors.FromShape(shapes.Make(t.DType, t.Shape...))
	err := gt.MutableBytes(func(data []byte) { copy(data, t.Data) })
	if err != nil {
		return nil, fmt.Errorf("tensor %q: writing GoMLX tensor: %w", t.Name, err)
	}
	return gt, nil
}
