package logger

import (
	"fmt"
	"slices"
)

// Logger receives metrics and hyperparameters from the trainer. Only rank 0
// calls it.
type Logger interface {
	// LogMetrics records metric values at an optimization step.
	LogMetrics(metrics map[string]float64, step int64) error
	// LogHyperparams records the run's hyperparameters (nested maps allowed).
	LogHyperparams(params map[string]any) error
	// Save flushes buffered data to disk.
	Save() error
	// Finalize is called once at the end of a run with "success", "failed"
	// or "interrupted".
	Finalize(status string) error
}

// Direr is an optional interface: loggers that write into a directory report
// it (used by checkpoints for the default directory).
type Direr interface {
	// LogDir returns the directory the logger writes into.
	LogDir() string
}

// Run statuses passed to [Logger.Finalize].
const (
	// StatusSuccess marks a run that finished normally.
	StatusSuccess = "success"
	// StatusFailed marks a run that stopped with an error.
	StatusFailed = "failed"
	// StatusInterrupted marks a run stopped by the user or a signal.
	StatusInterrupted = "interrupted"
)

// validStatuses lists the statuses Finalize accepts.
var validStatuses = []string{StatusSuccess, StatusFailed, StatusInterrupted}

// checkStatus reports an error naming the valid statuses when status is not
// one of them.
func checkStatus(status string) error {
	if slices.Contains(validStatuses, status) {
		return nil
	}
	return fmt.Errorf("logger: Finalize status %q is invalid; valid: %q", status, validStatuses)
}
