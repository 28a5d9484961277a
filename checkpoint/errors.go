package checkpoint

import (
	"errors"
	"fmt"
)

// Sentinel errors wrapped by the errors of Load, ReadHeader and Verify; test
// for them with errors.Is. A missing file wraps fs.ErrNotExist.
var (
	// ErrChecksum means the stored checksum does not match the content.
	ErrChecksum = errors.New("checkpoint checksum mismatch")
	// ErrTruncated means the file ends before its header or data does.
	ErrTruncated = errors.New("checkpoint truncated")
	// ErrNotCheckpoint means the file is not a safetensors file or lacks the
	// volt metadata.
	ErrNotCheckpoint = errors.New("not a volt checkpoint")
	// ErrUnsupportedVersion means the file's format version is newer than
	// this package supports.
	ErrUnsupportedVersion = errors.New("unsupported checkpoint format version")
	// ErrInvalid means the header is structurally wrong: unknown dtype,
	// offsets that do not match the shapes, overlapping or trailing data, ….
	ErrInvalid = errors.New("invalid checkpoint")
)

// fileError is an error about the checkpoint at path; its text is
// "checkpoint <path>" followed by rest.
type fileError struct {
	path string
	rest string // starts with ": " or " "
	err  error  // wrapped, may be nil
}

// Error implements error.
func (e *fileError) Error() string { return "checkpoint " + e.path + e.rest }

// Unwrap returns the wrapped sentinel or cause.
func (e *fileError) Unwrap() error { return e.err }

// errorf returns "checkpoint <path>: <formatted>" wrapping sentinel.
func errorf(path string, sentinel error, format string, args ...any) error {
	return &fileError{path: path, rest: ": " + fmt.Sprintf(format, args...), err: sentinel}
}

// notCheckpointf returns "checkpoint <path> is not a volt checkpoint:
// <formatted>" wrapping ErrNotCheckpoint.
func notCheckpointf(path string, format string, args ...any) error {
	return &fileError{path: path, rest: " is not a volt checkpoint: " + fmt.Sprintf(format, args...), err: ErrNotCheckpoint}
}
