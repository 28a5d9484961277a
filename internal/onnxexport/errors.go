package onnxexport

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/gomlx/compute"
)

// UnsupportedOpError reports a GoMLX op (or a configuration of one) that
// the ONNX export cannot write, and where the model builds it. It matches
// compute.ErrNotImplemented, so that GoMLX falls back to the decomposed
// form of a fused op.
type UnsupportedOpError struct {
	// Op is the GoMLX backend op, as compute.OpType names it (ConvGeneral,
	// Sort, …).
	Op string
	// Detail says what about it is unsupported, when it is a configuration
	// rather than the op itself.
	Detail string
	// Place is where the model builds the op: the innermost functions on
	// the call stack outside GoMLX and the export, up to the step (volt's
	// own frames), each with its file and line, innermost first, joined by
	// " ← "; "" when the stack holds none.
	Place string
}

// Error names the op, what is unsupported and the place.
func (e *UnsupportedOpError) Error() string {
	at := ""
	if e.Place != "" {
		at = ", built at " + e.Place
	}
	if e.Detail != "" {
		return fmt.Sprintf("ONNX export: op %s is not supported: %s%s", e.Op, e.Detail, at)
	}
	return fmt.Sprintf("ONNX export: op %s has no ONNX lowering in volt%s (supported: %s)", e.Op, at, SupportedOps())
}

// Unwrap returns compute.ErrNotImplemented.
func (e *UnsupportedOpError) Unwrap() error { return compute.ErrNotImplemented }

// refuse returns the error for op, placed where the model builds it.
func refuse(op, detail string) *UnsupportedOpError {
	return &UnsupportedOpError{Op: op, Detail: detail, Place: place()}
}

func unsupported(op compute.OpType, format string, args ...any) error {
	return refuse(op.String(), fmt.Sprintf(format, args...))
}

// placeFrames is how many of the model's frames Place shows.
const placeFrames = 3

// place describes the model's frames on the caller's stack: past the
// export's and GoMLX's (and the runtime's), up to volt's own package (the
// step's caller) or the testing package.
func place() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	var parts []string
	for {
		fr, more := frames.Next()
		fn := fr.Function
		switch {
		case strings.HasPrefix(fn, "github.com/gomlx/"), strings.HasPrefix(fn, "runtime."),
			strings.HasPrefix(fn, "github.com/voltml/volt/internal/onnxexport."),
			strings.HasPrefix(fn, "github.com/voltml/volt/internal/golower."):
			if len(parts) > 0 {
				more = false // back in GoMLX below the model (the graph's builder)
			}
		case strings.HasPrefix(fn, "github.com/voltml/volt."), strings.HasPrefix(fn, "testing."):
			more = false
		default:
			parts = append(parts, fmt.Sprintf("%s (%s:%d)", fn[strings.LastIndex(fn, "/")+1:],
				filepath.Join(filepath.Base(filepath.Dir(fr.File)), filepath.Base(fr.File)), fr.Line))
			if len(parts) == placeFrames {
				more = false
			}
		}
		if !more {
			return strings.Join(parts, " ← ")
		}
	}
}
