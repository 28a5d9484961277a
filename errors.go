package volt

import (
	"errors"
	"fmt"
)

// ErrNoTrainingStep is returned when the value passed as a module is nil.
var ErrNoTrainingStep = errors.New("volt: the module is nil; it must implement TrainingStep(*volt.Step, volt.Batch) *graph.Node")

// HookError wraps an error returned by a hook with where it happened.
type HookError struct {
	Target     string // the callback or module type
	Hook       string // the hook's name, e.g. "OnTrainEpochEnd"
	Epoch      int
	GlobalStep int64
	Err        error
}

// Error implements error.
func (e *HookError) Error() string {
	return fmt.Sprintf("%s.%s (epoch %d, global step %d): %v", e.Target, e.Hook, e.Epoch, e.GlobalStep, e.Err)
}

// Unwrap returns the hook's error.
func (e *HookError) Unwrap() error { return e.Err }

// StepError wraps a failure while tracing or running a step function.
type StepError struct {
	Step     string // "TrainingStep", "ValidationStep", …
	Epoch    int
	BatchIdx int
	Err      error
}

// Error implements error.
func (e *StepError) Error() string {
	return fmt.Sprintf("%s (epoch %d, batch %d): %v", e.Step, e.Epoch, e.BatchIdx, e.Err)
}

// Unwrap returns the underlying error.
func (e *StepError) Unwrap() error { return e.Err }

// NonFiniteError is returned by TerminateOnNaN and DetectAnomaly: it says what
// became NaN or infinite and where.
type NonFiniteError struct {
	What  string // "loss", "gradient of /dense/weights", "parameter /dense/bias (…)"
	Value float64
	Where string
}

// Error implements error.
func (e *NonFiniteError) Error() string {
	if e.What == "loss" {
		return fmt.Sprintf("volt: TerminateOnNaN: the loss is %v %s", e.Value, e.Where)
	}
	return fmt.Sprintf("volt: TerminateOnNaN: the %s is not finite %s", e.What, e.Where)
}
