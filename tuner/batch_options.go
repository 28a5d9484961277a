package tuner

import (
	"errors"
	"fmt"
	"time"
)

// BatchSizer is implemented by a data module whose batch size the tuner may
// change: after SetBatchSize(n), its TrainDataloader must yield batches of n.
type BatchSizer interface {
	BatchSize() int
	SetBatchSize(n int)
}

// BatchSizeOptions configures ScaleBatchSize. The zero value of each field
// takes Lightning's default; at least one budget must be set, since on CPU
// nothing else bounds the search.
type BatchSizeOptions struct {
	// Mode is Power (default) or BinSearch.
	Mode string
	// InitValue is the first size tried (default 2).
	InitValue int
	// MaxTrials bounds the number of successful trials (default 25).
	MaxTrials int
	// StepsPerTrial is the number of optimization steps of each trial
	// (default 3).
	StepsPerTrial int
	// MemoryBudget, in bytes, fails a trial whose estimated memory exceeds
	// it: the trainer's variables (weights and optimizer state), once more
	// for the gradients of the trainable ones, and one batch's tensors.
	// Activations are not counted. 0: no memory bound. Whatever the budgets,
	// a trial whose step fails to allocate memory (a GPU's out-of-memory
	// error) fails, as in Lightning; with Config.Accelerator "gpu" that may
	// be the only bound.
	MemoryBudget int64
	// StepTimeBudget fails a trial whose mean step time (the steps after the
	// first, which compiles the step for the new shape) exceeds it. 0: none.
	StepTimeBudget time.Duration
}

// withDefaults fills Lightning's defaults and checks every field, naming the
// bad ones.
func (o BatchSizeOptions) withDefaults(onGPU bool) (BatchSizeOptions, error) {
	if o.Mode == "" {
		o.Mode = Power
	}
	if o.InitValue == 0 {
		o.InitValue = 2
	}
	if o.MaxTrials == 0 {
		o.MaxTrials = 25
	}
	if o.StepsPerTrial == 0 {
		o.StepsPerTrial = 3
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.Mode != Power && o.Mode != BinSearch {
		bad("BatchSizeOptions.Mode: must be %q or %q, got %q", Power, BinSearch, o.Mode)
	}
	if o.InitValue < 1 {
		bad("BatchSizeOptions.InitValue: must be 0 (default 2) or positive, got %d", o.InitValue)
	}
	if o.MaxTrials < 1 {
		bad("BatchSizeOptions.MaxTrials: must be 0 (default 25) or positive, got %d", o.MaxTrials)
	}
	if o.StepsPerTrial < 1 {
		bad("BatchSizeOptions.StepsPerTrial: must be 0 (default 3) or positive, got %d", o.StepsPerTrial)
	}
	if o.MemoryBudget < 0 {
		bad("BatchSizeOptions.MemoryBudget: must be 0 (none) or a positive number of bytes, got %d", o.MemoryBudget)
	}
	if o.StepTimeBudget < 0 {
		bad("BatchSizeOptions.StepTimeBudget: must be 0 (none) or positive, got %v", o.StepTimeBudget)
	}
	if o.MemoryBudget == 0 && o.StepTimeBudget == 0 && !onGPU {
		bad("BatchSizeOptions.MemoryBudget, StepTimeBudget: set at least one (on the CPU nothing else bounds the search; with Config.Accelerator \"gpu\" a failed allocation does)")
	}
	return o, errors.Join(errs...)
}
