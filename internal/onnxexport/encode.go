package onnxexport

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gomlx/compute/dtypes"
)

// encode writes vals in dt, little-endian.
func encode(dt dtypes.DType, vals []float64) ([]byte, error) {
	size := dt.Size()
	raw := make([]byte, size*len(vals))
	for i, x := range vals {
		b := raw[i*size:]
		switch dt {
		case dtypes.Float32:
			binary.LittleEndian.PutUint32(b, math.Float32bits(float32(x)))
		case dtypes.Float64:
			binary.LittleEndian.PutUint64(b, math.Float64bits(x))
		case dtypes.Int32, dtypes.Uint32:
			binary.LittleEndian.PutUint32(b, uint32(int32(x)))
		case dtypes.Int64, dtypes.Uint64:
			binary.LittleEndian.PutUint64(b, uint64(int64(x)))
		case dtypes.Int16, dtypes.Uint16:
			binary.LittleEndian.PutUint16(b, uint16(int16(x)))
		case dtypes.Int8, dtypes.Uint8:
			b[0] = byte(int8(x))
		default:
			return nil, fmt.Errorf("no encoding of %s values", dt)
		}
	}
	return raw, nil
}
