package onnxexport

import (
	"fmt"

	"github.com/gomlx/compute"
)

// UnsupportedOpError reports a GoMLX op (or a configuration of one) that
// the ONNX export cannot write. It matches compute.ErrNotImplemented, so
// that GoMLX falls back to the decomposed form of a fused op.
type UnsupportedOpError struct {
	// Op is the GoMLX backend op, as compute.OpType names it (ConvGeneral,
	// Gather, …).
	Op string
	// Detail says what about it is unsupported, when it is a configuration
	// rather than the op itself.
	Detail string
}

// Error names the op.
func (e *UnsupportedOpError) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("ONNX export: op %s is not supported: %s", e.Op, e.Detail)
	}
	return fmt.Sprintf("ONNX export: op %s has no ONNX lowering in volt (supported: %s)", e.Op, SupportedOps())
}

// Unwrap returns compute.ErrNotImplemented.
func (e *UnsupportedOpError) Unwrap() error { return compute.ErrNotImplemented }

func unsupported(op compute.OpType, format string, args ...any) error {
	return &UnsupportedOpError{Op: op.String(), Detail: fmt.Sprintf(format, args...)}
}
