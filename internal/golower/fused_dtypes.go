package golower

import (
	"fmt"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
)

// The Go backend builds its fused softmax, layer normalization and attention
// for any floating-point dtype but runs them on float32 and float64 only: a
// bfloat16 or float16 one (a "bf16-true" or "16-true" model) fails when the
// graph runs ("FusedSoftmax: dtype BFloat16: op not implemented"). Refused
// here when the graph is built, as not implemented, they make GoMLX's graph
// package build the decomposed op instead, which runs in any dtype.

// fusedRuns reports whether the Go backend runs its fused softmax, layer
// normalization and attention on x, by dtype.
func (f *function) fusedRuns(op string, x compute.Value) error {
	s, err := f.Function.Shape(x)
	if err != nil {
		return err
	}
	if dt := s.DType; dt != dtypes.Float32 && dt != dtypes.Float64 {
		return fmt.Errorf("%w: %s: dtype %s (the Go backend runs it on float32 and float64)", compute.ErrNotImplemented, op, dt)
	}
	return nil
}

// FusedSoftmax implements compute.Function for the dtypes the Go backend runs it on.
func (f *function) FusedSoftmax(x compute.Value, axis int) (compute.Value, error) {
	if err := f.fusedRuns("FusedSoftmax", x); err != nil {
		return nil, err
	}
	return f.Function.FusedSoftmax(x, axis)
}

// FusedLayerNorm implements compute.Function for the dtypes the Go backend runs it on.
func (f *function) FusedLayerNorm(x compute.Value, axes []int, epsilon float64, gamma, beta compute.Value) (compute.Value, error) {
	if err := f.fusedRuns("FusedLayerNorm", x); err != nil {
		return nil, err
	}
	return f.Function.FusedLayerNorm(x, axes, epsilon, gamma, beta)
}

// FusedScaledDotProductAttention implements compute.Function for the dtypes
// the Go backend runs it on.
func (f *function) FusedScaledDotProductAttention(query, key, value compute.Value, axesLayout compute.AttentionAxesLayout,
	options *compute.ScaledDotProductAttentionConfig) (compute.Value, []compute.Value, error) {
	if err := f.fusedRuns("FusedScaledDotProductAttention", query); err != nil {
		return nil, nil, err
	}
	return f.Function.FusedScaledDotProductAttention(query, key, value, axesLayout, options)
}
