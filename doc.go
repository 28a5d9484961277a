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
//
// # Who owns what (for maintainers)
//
// The package keeps go/types' shape: one central object, the [Trainer],
// and files grouped by concern. Each group has an object that owns its
// state; the others reach that state through it. Separation of concerns:
//
//	Configuration   config.go, limits.go, log_options.go, precision.go,
//	                epochs_flag.go
//	  resolved        the Config NewTrainer validated (every bad field
//	                  named), with what it implies computed once.
//	Module          module.go
//	  Module          the user's: TrainingStep, and the optional steppers
//	                  and optimizer setup volt asks it for.
//	Lifecycle       trainer.go, run_state.go, state.go, progress.go,
//	                trainer_info.go, signals.go, errors.go, exit_on_error.go
//	  Trainer         what outlives a run: module, engine, compiled programs,
//	                  loops, loggers' state, Progress; lifecycle() wraps every
//	                  Fit/Validate/Test/Predict (Setup, Teardown, OnException).
//	  run             what one run holds (loaders, results, profiler); fresh
//	                  per run, empty between runs.
//	Hooks           hooks.go (the one list), hook_table.go,
//	                hook_table_gen.go (generated), dispatch.go,
//	                signatures.go, callback.go
//	  hookTable       every optional interface: who may implement it, when
//	                  it runs, how it is called.
//	  hookSet         the table resolved for one run: targets per hook, in
//	                  call order; Trainer.emit calls them.
//	Fit loop        fit_loop.go, training_epoch_loop.go, epoch_iterator.go,
//	                loop_point.go, stepping_batches.go, prepare_data.go
//	  fitLoop         epochs, their validations, stop conditions, the
//	                  resume point.
//	  epochIterator   one pass over a loader, with look-ahead and limits
//	                  (Keras's EpochIterator).
//	Optimization    optimization.go, optimizers.go, param_groups.go,
//	                param_select.go, scheduling.go, clipping.go,
//	                manual_optimization.go, tbptt.go
//	  optimization    which optimizers step on a batch, in which
//	                  accumulation mode (Lightning's optimization loops).
//	Compiled steps  train_steps.go, train_programs.go, train_step_outputs.go,
//	                step.go, step_output.go, step_anomaly.go, node.go,
//	                batch_dtypes.go, sync_batchnorm.go
//	  compiledSteps   the seam to internal/engine: traces, compiles and runs
//	                  the training steps (trainSteps; the loop tests use a
//	                  fake). Step is the module's view while tracing.
//	Evaluation      evaluation_loop.go, eval_batches.go, eval_programs.go,
//	                eval_outputs.go, prediction_loop.go, predictions.go,
//	                predict_rows.go
//	  evalLoop        a validation or test loop and its results, kept per
//	                  stage across runs; batchLoop what evaluation and
//	                  prediction share per loader.
//	Logging         logging.go, metric_logging.go, result_collection.go,
//	                metric_rows.go, metric_value.go, hparams_of.go,
//	                logger_resume.go, console.go, progress_bar*.go,
//	                default_progress_bar.go, model_summary.go, profiling.go,
//	                logging_part.go
//	  logging         the loggers, the latest values (callback, logged,
//	                  progress-bar metrics) and the pipeline from a step's
//	                  raw outputs to the logged rows; results one loop's
//	                  values over an epoch; metricTable the metric objects a
//	                  step logs.
//	Checkpoints     checkpointing.go, checkpoint_*.go, default_checkpoint.go,
//	                last_checkpoint.go, stream_resume.go, json_float.go,
//	                load_module.go, loaded_weights.go, state_parts.go,
//	                settings_part.go, fit_resume.go, callback_state.go
//	  statePart       one part of what a checkpoint holds besides the
//	                  weights (settings, fit-loop progress and resume point,
//	                  logging, callbacks, data module, schedulers, loss
//	                  scaler, logger marks): a key, save and load;
//	                  snapshot and restoreState loop over stateParts.
//	                  checkpointState what the trainer knows of checkpoints
//	                  between runs; defaultCheckpoint the latest-epoch
//	                  checkpoint Fit keeps when no Checkpointer is configured.
//	Data            datamodule.go, loaders.go
//	  DataModule      the loaders of each stage (Loaders for given ones).
//	Distributed     distributed*.go, manual_distributed.go
//	  ddpState        the trainer's place in a data-parallel job; these
//	                  files reduce gradients, agree across ranks and keep
//	                  logging to rank 0.
//	Inference       predictor.go, predictor_module.go, onnx_export.go
//	  Predictor       a checkpoint's module compiled for serving.
//
// Outside the root: internal/engine builds every GoMLX executor (backend,
// precision, programs, and on the pure-Go backend the optimizer step on the
// host through internal/fusedupdate's in-place kernels); internal/golower
// lowers ops onto the pure-Go backend's fast ones; packages callback, logger, data, metrics, optim and
// cli hold what a run is configured with.
//
// Extension points, and every place each one touches:
//   - A hook: one interface, with its doc comment, in hooks.go, then
//     "go generate ." (internal/hookgen writes hook_table_gen.go;
//     TestHookTableIsCurrent fails until then), then a t.emit where the
//     loop reaches the event and its place in the order above.
//   - A callback: a type implementing some of the hook interfaces, listed
//     in Config.Callbacks. A built-in one lives in package callback
//     (configured[C] and newCallback give it Validate and its constructor)
//     and is registered in cli/registry.go's builtinRegistry under
//     Lightning's class name in snake case (cli's
//     TestEveryConstructorIsRegistered fails until it is); a program's own
//     is named in configs with cli.WithCallback.
//   - A logger: logger.Logger, listed in Config.Loggers; one that writes
//     files also implements logger.Direr, logger.Resumable and
//     logger.DirClaimer, keeping its directory in a logger.RunDir. A
//     built-in one is registered in cli/registry.go as callbacks are; a
//     program's own with cli.WithLogger.
//   - A data source: a data.Dataset or data.IterableDataset behind a
//     data.DataLoader (a data.StatefulIterable makes a stream resume
//     mid-epoch), given through a DataModule or Loaders.
//   - A backend lowering: internal/golower's "Adding a lowering"; the
//     engine wraps every Go backend, so a lowering reaches every model.
//   - Resumable trainer state: a statePart (state_parts.go) owned by the
//     object whose state it is, and one line in stateParts; checkpoints
//     then save and restore it (TestToyPartSurvivesSIGKILL shows one).
//   - An optimizer kind: optim's traced update, and where the pure-Go
//     backend should run it on the host, a kernel in internal/fusedupdate
//     equal to it bitwise (TestKernelsEqualTracedUpdate).
package volt
