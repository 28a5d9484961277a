package statedict

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/dtypes/float16"
	"github.com/gomlx/gomlx/core/tensors"
)

// convertDType returns float tensor t's values as float dtype (float64,
// float32, float16 or bfloat16), rounded to nearest.
func convertDType(t *tensors.Tensor, dtype dtypes.DType) (*tensors.Tensor, error) {
	var values []float64
	switch t.DType() {
	case dtypes.Float64:
		values = tensors.MustCopyFlatData[float64](t)
	case dtypes.Float32:
		values = widen(tensors.MustCopyFlatData[float32](t), func(v float32) float64 { return float64(v) })
	case dtypes.Float16:
		values = widen(tensors.MustCopyFlatData[float16.Float16](t), float16.Float16.Float64)
	case dtypes.BFloat16:
		values = widen(tensors.MustCopyFlatData[bfloat16.BFloat16](t), bfloat16.BFloat16.Float64)
	default:
		return nil, fmt.Errorf("cannot convert %s to %s", t.DType(), dtype)
	}
	dims := t.Shape().Dimensions
	switch dtype {
	case dtypes.Float64:
		return fromFlat(values, dims), nil
	case dtypes.Float32:
		return fromFlat(widen(values, func(v float64) float32 { return float32(v) }), dims), nil
	case dtypes.Float16:
		return fromFlat(widen(values, float16.FromFloat64), dims), nil
	case dtypes.BFloat16:
		return fromFlat(widen(values, func(v float64) bfloat16.BFloat16 { return bfloat16.FromFloat32(float32(v)) }), dims), nil
	}
	return nil, fmt.Errorf("cannot convert %s to %s", t.DType(), dtype)
}

func widen[A, B any](in []A, f func(A) B) []B {
	out := make([]B, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
