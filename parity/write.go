package parity

import (
	"fmt"
	"os"
	"slices"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/nlpodyssey/safetensors"
)

// Write writes tensors (float32, float64, int32 or int64) to a new
// safetensors file at path, for cases built on the Go side or volt's own
// weights to compare with PyTorch's; it fails if path exists.
func Write(path string, byName map[string]*tensors.Tensor) error {
	views := map[string]safetensors.TensorView{}
	for name, t := range byName {
		var dt safetensors.DType
		switch t.DType() {
		case dtypes.Float32:
			dt = safetensors.F32
		case dtypes.Float64:
			dt = safetensors.F64
		case dtypes.Int32:
			dt = safetensors.I32
		case dtypes.Int64:
			dt = safetensors.I64
		default:
			return fmt.Errorf("parity: Write %s: tensor %q is %s; valid: float32, float64, int32, int64", path, name, t.DType())
		}
		var shape []uint64
		for _, d := range t.Shape().Dimensions {
			shape = append(shape, uint64(d))
		}
		var raw []byte
		t.ConstBytes(func(b []byte) { raw = slices.Clone(b) })
		v, err := safetensors.NewTensorView(dt, shape, raw)
		if err != nil {
			return fmt.Errorf("parity: Write %s: tensor %q: %w", path, name, err)
		}
		views[name] = v
	}
	buf, err := safetensors.Serialize(views, nil)
	if err != nil {
		return fmt.Errorf("parity: Write %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("parity: %w", err)
	}
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return fmt.Errorf("parity: Write %s: %w", path, err)
	}
	return f.Close()
}
