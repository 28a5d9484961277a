package data

import (
	"fmt"
	"slices"
)

// FieldValue is what a Field's Value may hold: a flat slice or a scalar of
// the supported element types.
type FieldValue interface {
	[]float32 | []float64 | []int32 | []int64 | []uint8 | []bool |
		float32 | float64 | int32 | int64 | int | uint8 | bool
}

// Rows is PyTorch's TensorDataset(inputs, labels) for Go slices: example i
// has inputs[i] as its one input and labels[i] as its one label (each a
// flat slice, shape [len], or a scalar). The two must have the same length
// and every row the same shape as the first; the error names the first
// row that differs.
//
//	train, err := data.Rows(xs, ys) // xs [][]float32, ys []float32
func Rows[X, Y FieldValue](inputs []X, labels []Y) (Slice, error) {
	if len(inputs) != len(labels) {
		return nil, fmt.Errorf("data.Rows: %d inputs and %d labels: want one label per input", len(inputs), len(labels))
	}
	out := make(Slice, len(inputs))
	var inShape, labelShape []int
	for i := range inputs {
		in, label := Field{Value: inputs[i]}, Field{Value: labels[i]}
		_, s, err := in.Describe()
		if err != nil {
			return nil, fmt.Errorf("data.Rows: inputs[%d]: %w", i, err)
		}
		_, ls, err := label.Describe()
		if err != nil {
			return nil, fmt.Errorf("data.Rows: labels[%d]: %w", i, err)
		}
		if i == 0 {
			inShape, labelShape = s, ls
		} else if !slices.Equal(s, inShape) {
			return nil, fmt.Errorf("data.Rows: inputs[%d] has shape %v, inputs[0] %v: every row must have the same shape", i, s, inShape)
		} else if !slices.Equal(ls, labelShape) {
			return nil, fmt.Errorf("data.Rows: labels[%d] has shape %v, labels[0] %v: every row must have the same shape", i, ls, labelShape)
		}
		out[i] = Example{Inputs: []Field{in}, Labels: []Field{label}}
	}
	return out, nil
}
