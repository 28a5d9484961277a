package volt

import (
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
)

// Per-run and per-batch hooks. A module or a callback implements any subset;
// the trainer finds them by type assertion once, when a run starts, and calls
// callbacks (in the order given) before the module. All run on the host, per
// event; see the package documentation for the order.

// Setup is called at the start of fit, validate, test and predict.
type Setup interface {
	Setup(t *Trainer, stage Stage) error
}

// Teardown is called at the end of every run, also after a failure.
type Teardown interface {
	Teardown(t *Trainer, stage Stage) error
}

// OnFitStart is called when Fit starts, after Setup.
type OnFitStart interface{ OnFitStart(t *Trainer) error }

// OnFitEnd is called when Fit ends normally.
type OnFitEnd interface{ OnFitEnd(t *Trainer) error }

// OnSanityCheckStart is called before the sanity validation run of Fit.
type OnSanityCheckStart interface{ OnSanityCheckStart(t *Trainer) error }

// OnSanityCheckEnd is called after the sanity validation run of Fit.
type OnSanityCheckEnd interface{ OnSanityCheckEnd(t *Trainer) error }

// OnTrainStart is called before the first training epoch.
type OnTrainStart interface{ OnTrainStart(t *Trainer) error }

// OnTrainEnd is called after the last training epoch.
type OnTrainEnd interface{ OnTrainEnd(t *Trainer) error }

// OnTrainEpochStart is called at the start of each training epoch.
type OnTrainEpochStart interface{ OnTrainEpochStart(t *Trainer) error }

// OnTrainEpochEnd is called at the end of each training epoch, after the
// epoch's validation. A value t.Log records here is in t.CallbackMetrics at
// once: the monitoring callbacks, which run after the module in this hook,
// read it.
type OnTrainEpochEnd interface{ OnTrainEpochEnd(t *Trainer) error }

// OnTrainBatchStart is called before each training batch. Calling
// t.SkipRestOfEpoch from it ends the epoch before this batch (Lightning's -1).
type OnTrainBatchStart interface {
	OnTrainBatchStart(t *Trainer, b *data.Batch, batchIdx int) error
}

// OnTrainBatchEnd is called after each training batch and its optimizer step.
type OnTrainBatchEnd interface {
	OnTrainBatchEnd(t *Trainer, out *StepOutput, b *data.Batch, batchIdx int) error
}

// OnValidationStart is called before a validation run (also in the sanity check).
type OnValidationStart interface{ OnValidationStart(t *Trainer) error }

// OnValidationEnd is called after a validation run.
type OnValidationEnd interface{ OnValidationEnd(t *Trainer) error }

// OnValidationEpochStart is called before the validation batches.
type OnValidationEpochStart interface{ OnValidationEpochStart(t *Trainer) error }

// OnValidationEpochEnd is called after the validation batches, when the
// epoch's values are in t.CallbackMetrics.
type OnValidationEpochEnd interface{ OnValidationEpochEnd(t *Trainer) error }

// OnValidationBatchStart is called before each validation batch.
type OnValidationBatchStart interface {
	OnValidationBatchStart(t *Trainer, b *data.Batch, batchIdx, dataloaderIdx int) error
}

// OnValidationBatchEnd is called after each validation batch.
type OnValidationBatchEnd interface {
	OnValidationBatchEnd(t *Trainer, out *StepOutput, b *data.Batch, batchIdx, dataloaderIdx int) error
}

// OnTestStart is called before a test run.
type OnTestStart interface{ OnTestStart(t *Trainer) error }

// OnTestEnd is called after a test run.
type OnTestEnd interface{ OnTestEnd(t *Trainer) error }

// OnTestEpochStart is called before the test batches.
type OnTestEpochStart interface{ OnTestEpochStart(t *Trainer) error }

// OnTestEpochEnd is called after the test batches.
type OnTestEpochEnd interface{ OnTestEpochEnd(t *Trainer) error }

// OnTestBatchStart is called before each test batch.
type OnTestBatchStart interface {
	OnTestBatchStart(t *Trainer, b *data.Batch, batchIdx, dataloaderIdx int) error
}

// OnTestBatchEnd is called after each test batch.
type OnTestBatchEnd interface {
	OnTestBatchEnd(t *Trainer, out *StepOutput, b *data.Batch, batchIdx, dataloaderIdx int) error
}

// OnPredictStart is called before a predict run.
type OnPredictStart interface{ OnPredictStart(t *Trainer) error }

// OnPredictEnd is called after a predict run.
type OnPredictEnd interface{ OnPredictEnd(t *Trainer) error }

// OnPredictEpochStart is called before the predict batches.
type OnPredictEpochStart interface{ OnPredictEpochStart(t *Trainer) error }

// OnPredictEpochEnd is called after the predict batches.
type OnPredictEpochEnd interface{ OnPredictEpochEnd(t *Trainer) error }

// OnPredictBatchStart is called before each predict batch.
type OnPredictBatchStart interface {
	OnPredictBatchStart(t *Trainer, b *data.Batch, batchIdx, dataloaderIdx int) error
}

// OnPredictBatchEnd is called after each predict batch; out.Prediction holds
// the batch's prediction.
type OnPredictBatchEnd interface {
	OnPredictBatchEnd(t *Trainer, out *StepOutput, b *data.Batch, batchIdx, dataloaderIdx int) error
}

// OnException is called when a run fails or is interrupted, with the error
// the run will return.
type OnException interface{ OnException(t *Trainer, err error) }

// Trace-time hooks. They run while the training step is traced into a graph
// (once per input shape), not per batch, and act on graph nodes: whatever
// they add becomes part of the compiled step.

// OnBeforeBackward is called with the loss before gradients are built.
type OnBeforeBackward interface {
	OnBeforeBackward(s *Step, loss *Node)
}

// OnAfterBackward is called with the gradients once they are built; a hook may
// replace a Gradient's Value.
type OnAfterBackward interface {
	OnAfterBackward(s *Step, grads []Gradient)
}

// OnBeforeOptimizerStep is called with the gradients the optimizer is about to
// apply (after clipping); a hook may replace a Gradient's Value.
type OnBeforeOptimizerStep interface {
	OnBeforeOptimizerStep(s *Step, optimizerIdx int, grads []Gradient)
}

// Gradient pairs a trainable variable with its gradient node:
//
//	type Gradient struct {
//		Variable *model.Variable // the trainable variable
//		Value    *graph.Node     // its gradient; a hook may replace it
//	}
//
// (It is defined in volt's engine, which builds the update, hence the alias.)
type Gradient = engine.Gradient
