package checkpoint

import (
	"fmt"
	"strings"

	"github.com/gomlx/compute/dtypes"
)

// dtypeNames maps the supported GoMLX dtypes to their safetensors names.
var dtypeNames = map[dtypes.DType]string{
	dtypes.Float64:  "F64",
	dtypes.Float32:  "F32",
	dtypes.Float16:  "F16",
	dtypes.BFloat16: "BF16",
	dtypes.Int64:    "I64",
	dtypes.Int32:    "I32",
	dtypes.Int16:    "I16",
	dtypes.Int8:     "I8",
	dtypes.Uint8:    "U8",
	dtypes.Bool:     "BOOL",
	dtypes.Uint64:   "U64",
	dtypes.Uint32:   "U32",
	dtypes.Uint16:   "U16",
}

// dtypeSizes is the size in bytes of one value of each supported dtype.
var dtypeSizes = map[dtypes.DType]int{
	dtypes.Float64: 8, dtypes.Float32: 4, dtypes.Float16: 2, dtypes.BFloat16: 2,
	dtypes.Int64: 8, dtypes.Int32: 4, dtypes.Int16: 2, dtypes.Int8: 1,
	dtypes.Uint8: 1, dtypes.Bool: 1, dtypes.Uint64: 8, dtypes.Uint32: 4, dtypes.Uint16: 2,
}

// validDTypeNames lists the supported safetensors dtype names, for errors.
const validDTypeNames = "F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL, U64, U32, U16"

// DTypeName returns the safetensors name of dtype ("F32", "BF16", …), or an
// error naming the supported ones.
func DTypeName(dtype dtypes.DType) (string, error) {
	if name, ok := dtypeNames[dtype]; ok {
		return name, nil
	}
	return "", fmt.Errorf("dtype %s cannot be stored in a checkpoint (valid: %s)", dtype, validDTypeNames)
}

// ParseDType returns the GoMLX dtype of a safetensors dtype name.
func ParseDType(name string) (dtypes.DType, error) {
	for dtype, n := range dtypeNames {
		if n == name {
			return dtype, nil
		}
	}
	return dtypes.InvalidDType, fmt.Errorf("dtype %q is not supported (valid: %s)", name, validDTypeNames)
}

// dtypeSize returns the byte size of one value of a supported dtype, 0 if
// it is not supported.
func dtypeSize(dtype dtypes.DType) int { return dtypeSizes[dtype] }

// formatShape renders a shape as "[2, 3]" ("[]" for a scalar).
func formatShape(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
