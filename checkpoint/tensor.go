package checkpoint

import (
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/gomlx/compute/dtypes"
)

// Tensor is one named array.
type Tensor struct {
	// Name is the tensor's key in the file: non-empty UTF-8, unique within a
	// checkpoint, not "__metadata__".
	Name string
	// DType is one of the supported dtypes (see the package documentation).
	DType dtypes.DType
	// Shape holds the dimensions; empty for a scalar.
	Shape []int
	// Data holds the values, little-endian, row-major:
	// len(Data) == product(Shape) * size of DType.
	Data []byte
}

// metadataKey is the reserved header key of the metadata object.
const metadataKey = "__metadata__"

// numElements returns the product of shape, or an error when a dimension is
// negative or the product overflows.
func numElements(shape []int) (int64, error) {
	n := int64(1)
	for i, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("dimension %d of shape %s is negative", i, formatShape(shape))
		}
		if d != 0 && n > math.MaxInt64/int64(d) {
			return 0, fmt.Errorf("shape %s has too many elements", formatShape(shape))
		}
		n *= int64(d)
	}
	return n, nil
}

// validate checks that t can be stored: its name, dtype and that its Data
// length matches its shape.
func (t *Tensor) validate() error {
	switch {
	case t.Name == "":
		return fmt.Errorf("a tensor has an empty name (shape %s)", formatShape(t.Shape))
	case t.Name == metadataKey:
		return fmt.Errorf("tensor name %q is reserved for the metadata", metadataKey)
	case !utf8.ValidString(t.Name):
		return fmt.Errorf("tensor name %q is not valid UTF-8", t.Name)
	}
	if _, err := DTypeName(t.DType); err != nil {
		return fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	n, err := numElements(t.Shape)
	if err != nil {
		return fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	size := int64(dtypeSize(t.DType))
	if n > math.MaxInt64/size || n*size != int64(len(t.Data)) {
		return fmt.Errorf("tensor %q: shape %s of %s needs %d elements × %d bytes, but Data has %d bytes",
			t.Name, formatShape(t.Shape), dtypeNames[t.DType], n, size, len(t.Data))
	}
	return nil
}
