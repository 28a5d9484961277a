// Package volt is PyTorch Lightning for Go: the user writes a Module (graph
// building code on GoMLX), volt runs the loops, hooks, logging, callbacks and
// data loading around it.
//
// Start with [NewTrainer], which checks a [Config] and returns a [Trainer],
// and [Trainer.Fit], which trains a [Module] on a [DataModule] (such as
// [Loaders]); [Step.Log] records values from the step. The Trainer example
// is a whole run; github.com/voltml/volt/callback holds the callbacks and
// docs/from-lightning.md maps Lightning's API to volt's.
//
// # The module contract
//
// A Module implements TrainingStep, traced into a GoMLX graph once per input
// shape. Everything else is optional and found by type assertion when a run
// starts: ValidationStepper, TestStepper, PredictStepper, OptimizerConfigurer,
// HParamser, and any of the hook interfaces below. Callbacks implement the same
// hook interfaces; for every hook the callbacks run first, in Config.Callbacks
// order with Checkpointer callbacks (ModelCheckpoint) moved last, then the
// module. OnTrainEpochEnd is the exception, as in Lightning: the monitoring
// callbacks (Checkpointer, MetricMonitor such as EarlyStopping) run after the
// module, so that they see what it logs there.
//
// # Hooks that run per event, on the host
//
// Fit calls, in this order:
//
//	Setup(fit)
//	OnFitStart
//	[the training step is traced on the first batch's shapes; the model
//	 summary is printed]
//	OnSanityCheckStart                      (when there is validation and NumSanityValSteps != 0,
//	                                         also when resuming)
//	  OnValidationStart, OnValidationEpochStart,
//	  OnValidationBatchStart/End per batch, OnValidationEpochEnd, OnValidationEnd
//	OnSanityCheckEnd
//	OnTrainStart
//	for each epoch:
//	  OnTrainEpochStart
//	  for each batch: OnTrainBatchStart, [compiled step, scheduler steps],
//	                  OnTrainBatchEnd
//	  validation as above                   (every CheckValEveryNEpoch epochs, and
//	                                         before a granted stop ends the epoch)
//	  OnTrainEpochEnd, [plateau scheduler steps]
//	OnTrainEnd
//	OnFitEnd
//	Teardown(fit)                           (always, also after an error)
//
// Validate and Test call Setup, the validation/test hooks as above (batch hooks
// receive the dataloader index), and Teardown. Predict does the same with the
// OnPredict… hooks. What a validation, test or predict step names with
// Step.Output reaches the batch-end hooks on the host (StepOutput.Output),
// in runs where one of them reads it (see StepOutputReader). OnException is called with the error when a run fails or
// its context is cancelled. A hook returns an error to fail the run; it asks
// for a graceful stop with Trainer.Stop, and OnTrainBatchStart can end the
// epoch early with Trainer.SkipRestOfEpoch.
//
// # Hooks that run at trace time
//
// OnBeforeBackward, OnAfterBackward and OnBeforeOptimizerStep (and
// ConfigureGradientClipping) run while the training step is traced: right
// after OnFitStart, and again for each new input shape, not once per batch. They
// receive graph nodes and whatever they add becomes part of the compiled step;
// they cost nothing per batch.
//
// # Logging
//
// Step.Log (inside step functions) and Trainer.Log (inside host hooks) record
// scalar values. Defaults follow Lightning: per step in training steps and
// training batch hooks, per epoch (mean weighted by batch size) elsewhere.
// Values logged both ways appear as name_step and name_epoch. With several
// evaluation loaders, names get a "/dataloader_idx_N" suffix, last
// (name_epoch/dataloader_idx_1). Training step values reach the loggers every
// Config.LogEveryNSteps optimization steps, under the index of the last
// optimization step; evaluation step values after every batch, under the
// count of that loader's batches before it in the run (as Lightning); epoch
// values at the end of the epoch.
// Step.LogMetric logs a metric of package metrics, whose state the compiled
// step accumulates: its epoch value is the metric's Compute over the whole
// epoch. Step.UpdateMetric and Trainer.MetricValue do the same for values
// that are no scalar (a confusion matrix, curves).
//
// # Profiling
//
// Config.Profiler ("simple", "advanced" or "trace"; package profiler) times
// every hook call (one row per target and hook, as "[Callback]<name>.<Hook>"),
// the wait for each batch, each compiled step, logging and checkpoint saves,
// and writes its report to the run's log directory: a table per run
// (<stage>-profile.txt, also printed), a CPU profile labelled by action with
// a heap profile, or a Go execution trace with Chrome trace events. Off, it
// costs a nil check per site and no allocation.
package volt
