package engine

import (
	"fmt"
	"strings"

	"github.com/gomlx/compute/dtypes"
)

// Precision names a numeric policy, as Lightning's precision flag does.
type Precision string

// The precision policies volt implements.
const (
	Precision32 Precision = "32-true"
	Precision64 Precision = "64-true"
)

// Precisions lists the valid precision values, for error messages.
var Precisions = []Precision{Precision32, Precision64}

// ParsePrecision validates p; the empty string means "32-true".
func ParsePrecision(p string) (Precision, error) {
	if p == "" {
		return Precision32, nil
	}
	for _, valid := range Precisions {
		if Precision(p) == valid {
			return valid, nil
		}
	}
	names := make([]string, len(Precisions))
	for i, v := range Precisions {
		names[i] = fmt.Sprintf("%q", v)
	}
	return "", fmt.Errorf("unknown precision %q; valid: %s", p, strings.Join(names, ", "))
}

// DType returns the dtype in which parameters are kept and computed.
func (p Precision) DType() dtypes.DType {
	if p == Precision64 {
		return dtypes.Float64
	}
	return dtypes.Float32
}
