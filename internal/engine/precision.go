package engine

import (
	"fmt"
	"strings"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
)

// Precision names a numeric policy, as Lightning's precision flag does.
type Precision string

// The precision policies volt implements.
const (
	Precision32     Precision = "32-true"
	Precision64     Precision = "64-true"
	PrecisionBF16   Precision = "bf16-true"
	PrecisionBF16M  Precision = "bf16-mixed"
	Precision16     Precision = "16-true"
	Precision16M    Precision = "16-mixed"
	defaultPrecison           = Precision32
)

// Precisions lists the valid precision values, for error messages.
var Precisions = []Precision{Precision32, Precision64, PrecisionBF16M, PrecisionBF16, Precision16M, Precision16}

// ParsePrecision validates p; the empty string means "32-true".
func ParsePrecision(p string) (Precision, error) {
	if p == "" {
		return defaultPrecison, nil
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

// DType returns the dtype in which the model computes: inputs are cast to it
// and layers create their variables in it.
func (p Precision) DType() dtypes.DType {
	switch p {
	case Precision64:
		return dtypes.Float64
	case PrecisionBF16, PrecisionBF16M:
		return dtypes.BFloat16
	case Precision16, Precision16M:
		return dtypes.Float16
	}
	return dtypes.Float32
}

// Mixed reports whether the policy keeps float32 master weights (and
// optimizer state) beside the low-precision compute copies.
func (p Precision) Mixed() bool { return p == PrecisionBF16M || p == Precision16M }

// LossScaling reports whether the policy scales the loss dynamically to keep
// float16 gradients from underflowing, skipping steps that overflow.
func (p Precision) LossScaling() bool { return p == Precision16M }

// CheckBackend returns a clear error when backend cannot compute in p's dtype.
func (p Precision) CheckBackend(backend compute.Backend) error {
	dtype := p.DType()
	if !backend.Capabilities().DTypes[dtype] {
		return fmt.Errorf("precision %q computes in %s, which the backend %q does not support; use \"32-true\" or another backend",
			p, dtype, backend.String())
	}
	return nil
}
