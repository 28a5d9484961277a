package volt

import (
	"fmt"
	"slices"

	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/dtypes/float16"
	"github.com/gomlx/gomlx/core/tensors"
)

// PredictionValues joins one loader's predictions, as Predict returns them
// (preds[i] for the i-th predict loader: one tensor per batch), along their
// first axis, the batch, and returns the values as float32 in row-major
// order with the shape of the whole: [examples, ...].
//
// Any dtype a PredictStep can return is read: float32, float64 ("64-true"),
// bfloat16 and float16 (what a module computes under "bf16-mixed" and
// "16-mixed"), integers and booleans (1 or 0). Every batch must have the
// batch as its first axis and the same other dimensions.
func PredictionValues(batches []*tensors.Tensor) (values []float32, shape []int, err error) {
	if len(batches) == 0 {
		return nil, nil, fmt.Errorf("volt.PredictionValues: no batches (a loader's predictions are Predict's result[i])")
	}
	for i, b := range batches {
		switch {
		case b == nil:
			return nil, nil, fmt.Errorf("volt.PredictionValues: batch %d: no prediction (nil tensor)", i)
		case b.Rank() == 0:
			return nil, nil, fmt.Errorf("volt.PredictionValues: batch %d: the prediction is a scalar; "+
				"PredictStep must return a tensor whose first axis is the batch", i)
		}
		if dims, first := b.Shape().Dimensions, batches[0].Shape().Dimensions; !slices.Equal(dims[1:], first[1:]) {
			return nil, nil, fmt.Errorf("volt.PredictionValues: batch %d has shape %v, batch 0 %v: "+
				"the dimensions after the first (the batch) must agree", i, dims, first)
		}
	}
	shape = slices.Clone(batches[0].Shape().Dimensions)
	shape[0] = 0
	for _, b := range batches {
		shape[0] += b.Shape().Dimensions[0]
		values, err = appendFloat32(values, b)
		if err != nil {
			return nil, nil, fmt.Errorf("volt.PredictionValues: %w", err)
		}
	}
	return values, shape, nil
}

// PredictionRows returns one loader's predictions (see PredictionValues) as
// one row per example, in the loaders' order: a prediction of shape
// [batch] gives rows of one value, [batch, k] rows of k values (a
// classifier's logits), and higher ranks rows of their flattened values.
func PredictionRows(batches []*tensors.Tensor) ([][]float32, error) {
	values, shape, err := PredictionValues(batches)
	if err != nil {
		return nil, fmt.Errorf("volt.PredictionRows: %w", err)
	}
	width := 1
	for _, d := range shape[1:] {
		width *= d
	}
	rows := make([][]float32, shape[0])
	for i := range rows {
		rows[i] = values[i*width : (i+1)*width : (i+1)*width]
	}
	return rows, nil
}

// appendFloat32 appends t's values, converted to float32, to out.
func appendFloat32(out []float32, t *tensors.Tensor) ([]float32, error) {
	var unsupported bool
	err := t.ConstFlatData(func(flat any) {
		switch x := flat.(type) {
		case []float32:
			out = append(out, x...)
		case []float64:
			out = appendConverted(out, x)
		case []bfloat16.BFloat16:
			for _, v := range x {
				out = append(out, v.Float32())
			}
		case []float16.Float16:
			for _, v := range x {
				out = append(out, v.Float32())
			}
		case []int8:
			out = appendConverted(out, x)
		case []int16:
			out = appendConverted(out, x)
		case []int32:
			out = appendConverted(out, x)
		case []int64:
			out = appendConverted(out, x)
		case []uint8:
			out = appendConverted(out, x)
		case []uint16:
			out = appendConverted(out, x)
		case []uint32:
			out = appendConverted(out, x)
		case []uint64:
			out = appendConverted(out, x)
		case []bool:
			for _, v := range x {
				out = append(out, float32(boolToInt(v)))
			}
		default:
			unsupported = true
		}
	})
	if err == nil && unsupported {
		err = fmt.Errorf("predictions of dtype %s cannot be read as numbers", t.DType())
	}
	return out, err
}

// appendConverted appends xs converted to float32 to out.
func appendConverted[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float64](out []float32, xs []T) []float32 {
	for _, v := range xs {
		out = append(out, float32(v))
	}
	return out
}

// boolToInt returns 1 for true, 0 for false.
func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
