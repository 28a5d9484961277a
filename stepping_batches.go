package volt

import (
	"errors"
	"fmt"
)

// ErrUnboundedTraining is returned by EstimatedSteppingBatches when the run
// has no end (MaxEpochs -1 and no MaxSteps): Lightning's infinity.
var ErrUnboundedTraining = errors.New("training has no end (MaxEpochs -1 and no MaxSteps)")

// EstimatedSteppingBatches returns the number of optimization steps the
// current Fit will take if nothing stops it early (Lightning's
// estimated_stepping_batches), for schedulers that need the total, such as
// a one-cycle schedule:
//
//	ceil(batches per epoch / AccumulateGradBatches) × MaxEpochs, at most MaxSteps
//
// where the batches per epoch count LimitTrainBatches, OverfitBatches and
// FastDevRun, and the last, partial accumulation window of an epoch steps.
// With MaxEpochs -1 it is MaxSteps; with iterable training data of unknown
// length, MaxSteps too. It uses the accumulation in force when called.
//
// It needs the training loader: call it during Fit, from ConfigureOptimizers
// (which Fit calls after loading the data; keep the *Trainer from Setup or
// OnFitStart's argument) or any later hook. Elsewhere, and where Lightning
// would answer infinity (ErrUnboundedTraining) or -1 (iterable data without
// MaxSteps), it returns an error saying so.
func (t *Trainer) EstimatedSteppingBatches() (int64, error) {
	maxSteps := t.cfg.maxSteps // -1: none
	if t.cfg.maxEpochs == -1 {
		if maxSteps == -1 {
			return 0, fmt.Errorf("volt: EstimatedSteppingBatches: %w", ErrUnboundedTraining)
		}
		return maxSteps, nil
	}
	if t.run.trainLoader == nil {
		return 0, errors.New("volt: EstimatedSteppingBatches needs the training loader: call it during Fit (from ConfigureOptimizers or a later hook)")
	}
	batches := t.NumTrainingBatches()
	if batches < 0 {
		if maxSteps == -1 {
			return 0, errors.New("volt: EstimatedSteppingBatches: the training data has no known length and Config.MaxSteps is not set; set MaxSteps, or LimitTrainBatches to Batches(n)")
		}
		return maxSteps, nil
	}
	return steppingBatches(int64(batches), int64(t.cfg.accumulate), int64(t.cfg.maxEpochs), maxSteps), nil
}

// steppingBatches is Lightning's estimate for a known epoch length: whole
// accumulation windows (the last one partial) per epoch, times the epochs,
// capped by maxSteps (-1: none).
func steppingBatches(batches, accumulate, epochs, maxSteps int64) int64 {
	steps := (batches + accumulate - 1) / accumulate * max(epochs, 1)
	if maxSteps != -1 {
		steps = min(steps, maxSteps)
	}
	return steps
}
