package data

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/dtypes"
)

// Field is one array of one example.
//
// Value is a flat Go slice ([]float32, []float64, []int32, []int64, []uint8,
// []bool) or a Go scalar (float32, float64, int32, int64, int, uint8, bool; an
// int is stored as int32).
//
// Shape is the per-example shape: nil or empty for scalars. For a slice, the
// product of Shape must equal the length of the slice, and a nil Shape means
// shape [len(slice)].
type Field struct {
	Value any
	Shape []int
}

// Example is one sample: model inputs and labels.
type Example struct {
	Inputs, Labels []Field
}

// supportedValueTypes lists the valid Field.Value types, used in error messages.
const supportedValueTypes = "[]float32, []float64, []int32, []int64, []uint8, []bool, " +
	"float32, float64, int32, int64, int, uint8, bool"

// Describe returns the dtype and the per-example shape of the field,
// validating Value and Shape. The returned shape is never nil for slices and
// always empty for scalars.
func (f Field) Describe() (dtypes.DType, []int, error) {
	dtype, n, scalar := valueInfo(f.Value)
	if dtype == dtypes.InvalidDType {
		return dtype, nil, fmt.Errorf("data.Field.Value: unsupported type %T, valid types are %s",
			f.Value, supportedValueTypes)
	}
	if v, ok := f.Value.(int); ok && (v < math.MinInt32 || v > math.MaxInt32) {
		return dtype, nil, fmt.Errorf("data.Field.Value: int %d does not fit in int32", v)
	}
	for _, d := range f.Shape {
		if d < 0 {
			return dtype, nil, fmt.Errorf("data.Field.Shape: dimensions must be >= 0, got %v", f.Shape)
		}
	}
	if scalar {
		if len(f.Shape) != 0 {
			return dtype, nil, fmt.Errorf("data.Field.Shape: must be empty for scalar value of type %T, got %v",
				f.Value, f.Shape)
		}
		return dtype, []int{}, nil
	}
	if f.Shape == nil {
		return dtype, []int{n}, nil
	}
	if size := shapeSize(f.Shape); size != n {
		return dtype, nil, fmt.Errorf("data.Field.Shape: %v has %d elements but Value (%T) has length %d",
			f.Shape, size, f.Value, n)
	}
	return dtype, append([]int{}, f.Shape...), nil
}

// valueInfo returns the dtype, the number of elements and whether v is a
// scalar. The dtype is dtypes.InvalidDType for unsupported types.
func valueInfo(v any) (dtype dtypes.DType, n int, scalar bool) {
	switch x := v.(type) {
	case []float32:
		return dtypes.Float32, len(x), false
	case []float64:
		return dtypes.Float64, len(x), false
	case []int32:
		return dtypes.Int32, len(x), false
	case []int64:
		return dtypes.Int64, len(x), false
	case []uint8:
		return dtypes.Uint8, len(x), false
	case []bool:
		return dtypes.Bool, len(x), false
	case float32:
		return dtypes.Float32, 1, true
	case float64:
		return dtypes.Float64, 1, true
	case int32, int:
		return dtypes.Int32, 1, true
	case int64:
		return dtypes.Int64, 1, true
	case uint8:
		return dtypes.Uint8, 1, true
	case bool:
		return dtypes.Bool, 1, true
	}
	return dtypes.InvalidDType, 0, false
}

// shapeSize returns the number of elements of a shape (1 for a scalar).
func shapeSize(shape []int) int {
	size := 1
	for _, d := range shape {
		size *= d
	}
	return size
}
