package engine

import (
	"fmt"
	"runtime/debug"
)

// PanicError is a panic recovered at the engine boundary (graph building and
// GoMLX raise errors by panicking).
type PanicError struct {
	Value any    // what was passed to panic
	Stack []byte // the stack where it was raised
}

// Error implements error.
func (e *PanicError) Error() string {
	if err, ok := e.Value.(error); ok {
		return err.Error()
	}
	return fmt.Sprint(e.Value)
}

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// Catch runs fn and turns a panic into a *PanicError.
func Catch(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return fn()
}
