package volt

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/internal/simdcheck"
	"github.com/voltml/volt/logger"
	"github.com/voltml/volt/optim"
)

// Trainer runs the loops around a Module: Fit, Validate, Test and Predict.
// A Trainer is used from one goroutine at a time; the hooks it calls receive
// it and may read its state, log values and ask it to stop.
type Trainer struct {
	cfg      resolved
	state    State
	progress Progress

	// What the last run was given, kept after it for SaveCheckpoint and the
	// accessors.
	module     Module
	dataModule DataModule
	hooks      *hookSet // resolved when a run starts

	// The engine for module (its backend and variable store), and what
	// the trainer keeps across runs for module.
	eng       *engine.Engine
	perModule moduleKept

	logs logging
	ckpt checkpointState
	stop stopRequest
	ddp  ddpState
	run  *run // the run in progress; empty between runs

	defaultBar *ProgressBar // Config.EnableProgressBar's, nil when off
}

// moduleKept is what the trainer keeps across runs for its module, made
// afresh when the module changes (ensureEngine).
type moduleKept struct {
	// evals are the compiled evaluation and prediction programs.
	evals map[evalKey]*evalProgram
	// evalLoops are the validation and test loops, with their results.
	evalLoops map[RunningStage]*evalLoop
	// optimization decides which optimizers step, in which mode; it runs
	// the compiled training steps. Every Fit makes its own
	// (dropOptimizers).
	optimization *optimization
	scaler       *optim.LossScaler // "16-mixed" dynamic loss scaling
}

// NewTrainer validates cfg, naming every bad field, and returns a trainer.
func NewTrainer(cfg Config) (*Trainer, error) {
	r, err := cfg.validate()
	if err != nil {
		return nil, fmt.Errorf("volt.NewTrainer: invalid configuration:\n%w", err)
	}
	t := &Trainer{
		cfg:       r,
		state:     State{Status: StatusInitializing},
		progress:  Progress{Version: ProgressVersion},
		perModule: moduleKept{evals: map[evalKey]*evalProgram{}},
		logs:      newLogging(),
		run:       &run{},
	}
	t.logs.bind(&t.state, &t.progress, &t.ddp, r.Log)
	if t.defaultBar, err = defaultProgressBar(r.Config); err != nil {
		return nil, fmt.Errorf("volt.NewTrainer: invalid configuration:\n%w", err)
	}
	if r.FastDevRun > 0 {
		r.Log.Info(fmt.Sprintf("volt: FastDevRun=%d: one epoch of %d training, validation and test batch(es); loggers, checkpointing and early stopping are off", r.FastDevRun, r.FastDevRun))
	}
	switch {
	case len(r.Loggers) > 0:
		t.logs.loggers = r.Loggers
	case !r.DisableLoggers:
		csv, err := logger.NewCSV(logger.CSVConfig{SaveDir: r.DefaultRootDir, Name: "volt_logs"})
		if err != nil {
			return nil, fmt.Errorf("volt.NewTrainer: default CSV logger in %s: %w", filepath.Join(r.DefaultRootDir, "volt_logs"), err)
		}
		t.logs.loggers = []logger.Logger{csv}
	}
	if err := t.setupDistributed(); err != nil {
		return nil, fmt.Errorf("volt.NewTrainer: %w", err)
	}
	simdcheck.WarnOnce(t.cfg.Log, t.cfg.backend)
	return t, nil
}

// State returns what the trainer is doing.
func (t *Trainer) State() State { return t.state }

// Progress returns a copy of every loop counter.
func (t *Trainer) Progress() Progress { return t.progress }

// CurrentEpoch returns the index of the current training epoch (the number of
// completed epochs after Fit).
func (t *Trainer) CurrentEpoch() int { return int(t.progress.Epoch.Total.Completed) }

// GlobalStep returns the number of optimization steps taken.
func (t *Trainer) GlobalStep() int64 { return t.progress.OptimizerSteps }

// Module returns the module of the current or last run.
func (t *Trainer) Module() Module { return t.module }

// Store returns the variable store holding the module's weights and the
// optimizer state (nil before the first run).
func (t *Trainer) Store() *model.Store {
	if t.eng == nil {
		return nil
	}
	return t.eng.Store
}

// Loggers returns the loggers in use.
func (t *Trainer) Loggers() []logger.Logger { return t.logs.loggers }

// ShouldStop reports whether a stop was requested.
func (t *Trainer) ShouldStop() bool { return t.stop.requested }

// Stop asks Fit to stop at the end of the current batch; the request is
// honoured once MinEpochs and MinSteps are reached. The reason is reported once.
// Asked in OnTrainEpochStart (or before a training epoch starts) it ends that
// epoch before its first batch, as Lightning does: no batch is trained and no
// validation runs, the epoch-end hooks run, then Fit ends.
// In a data-parallel job a stop asked on any rank stops every rank after the
// same batch.
func (t *Trainer) Stop(reason string) {
	if !t.stop.requested {
		t.stop.requested, t.stop.reason = true, reason
	}
}

// SkipRestOfEpoch, called from OnTrainBatchStart, ends the current training
// epoch before the batch (Lightning's -1 from on_train_batch_start).
func (t *Trainer) SkipRestOfEpoch() { t.run.skipEpoch = true }

// warnOnce logs msg at warning level the first time key is seen
// (logging.warnOnce).
func (t *Trainer) warnOnce(key, msg string, attrs ...any) { t.logs.warnOnce(key, msg, attrs...) }

// sayOnce logs msg at info level the first time key is seen.
func (t *Trainer) sayOnce(key, msg string, attrs ...any) { t.logs.sayOnce(key, msg, attrs...) }

// ensureEngine creates the engine (backend, variable store) for m, keeping
// the current one when the module is the same as in the previous run.
func (t *Trainer) ensureEngine(m Module) error {
	if t.eng != nil && t.module == m {
		return nil
	}
	backend, err := engine.Backend(t.cfg.backend)
	if err != nil {
		return err
	}
	if err := t.cfg.precision.CheckBackend(backend); err != nil {
		return fmt.Errorf("Config.Precision: %w", err)
	}
	eng, err := engine.New(backend, t.cfg.precision.DType(), int64(t.cfg.seed))
	if err != nil {
		return err
	}
	eng.Log = t.cfg.Log
	t.eng, t.module = eng, m
	t.perModule = moduleKept{evals: map[evalKey]*evalProgram{}, evalLoops: map[RunningStage]*evalLoop{}, scaler: newScaler(t.cfg.precision)}
	if t.perModule.scaler != nil {
		if err := t.setLossScale(); err != nil {
			return err
		}
	}
	t.logs.trainMetrics = newMetricTable()
	t.logs.trainRes = newResults()
	return nil
}

// dropOptimizers forgets the previous Fit's optimizers, their state in the
// store (learning rates, step counters, moments) and the training programs
// built with them: as Lightning, every Fit calls ConfigureOptimizers and
// trains with fresh optimizers (a checkpoint it resumes from then restores
// their state).
func (t *Trainer) dropOptimizers() error {
	if t.perModule.optimization == nil {
		return nil
	}
	for i := range t.perModule.optimization.opts {
		if err := t.eng.Store.DeleteVariablesInScope(optim.StatePrefix(i)); err != nil {
			return fmt.Errorf("clearing optimizer %d's state: %w", i, err)
		}
	}
	t.perModule.optimization = nil
	t.logs.trainMetrics = newMetricTable()
	t.logs.trainRes = newResults()
	return nil
}

// lifecycle is what is shared by Fit, Validate, Test and Predict: setup,
// body, OnException on failure, then teardown (always; the data module's
// first, then the callbacks' and the module's in their usual order, as
// Lightning does) and the status.
func (t *Trainer) lifecycle(ctx context.Context, fn Stage, m Module, dm DataModule, options []RunOption, body func(ctx context.Context) error) (err error) {
	if m == nil {
		return ErrNoTrainingStep
	}
	if t.state.Status == StatusRunning {
		return fmt.Errorf("volt: Trainer.%s called while the trainer is already running %s", fn, t.state.Fn)
	}
	if err := errors.Join(checkSignatures("module", m, onModule), checkSignatures("data module", dm, onDataModule)); err != nil {
		return fmt.Errorf("volt: %w", err)
	}
	freshEngine := t.eng == nil || t.module != m
	if err := t.ensureEngine(m); err != nil {
		return fmt.Errorf("volt: %w", err)
	}
	t.run = &run{}
	var opts runOptions
	for _, o := range options {
		o(&opts)
	}
	// Before anything (the profiler, callbacks) places files under LogDir.
	if err := t.settleLoggers(fn, &opts); err != nil {
		return fmt.Errorf("volt: %w", err)
	}
	if err := t.startProfiler(fn); err != nil {
		t.run = &run{}
		return fmt.Errorf("volt: %w", err)
	}
	t.state = State{Fn: fn, Status: StatusRunning}
	t.stop = stopRequest{}
	t.ckpt.fit.resumedFrom = ""
	t.ddp.agreedInterrupt, t.ddp.agreedNonFinite = false, false
	t.hooks = resolveHooks(t.callbacks(), t.cfg.FastDevRun > 0, m, dm)
	t.dataModule = dm

	defer func() {
		if r := recover(); r != nil {
			err = errors.Join(err, &engine.PanicError{Value: r})
		}
		t.abortOnFailure(err)
		// As Lightning: the status says how the run ended, OnException
		// sees it (and may still save a resumable checkpoint), then
		// teardown runs.
		var signalled *InterruptedError
		switch {
		case err == nil:
		case ctx.Err() != nil || errors.As(err, &signalled):
			t.state.Status = StatusInterrupted
		default:
			t.state.Status = StatusFailed
		}
		if err != nil {
			err = errors.Join(err, t.emitAll(hookOnException, hookArgs{err: err}))
		}
		err = errors.Join(err, t.emitAll(hookDataTeardown, hookArgs{stage: fn}), t.emitAll(hookTeardown, hookArgs{stage: fn}))
		t.run.res = nil // no logging after teardown
		switch {
		case err == nil:
			t.state.Status = StatusFinished
		case t.state.Status == StatusRunning:
			t.state.Status = StatusFailed
		}
		if fn != StagePredict {
			err = errors.Join(err, t.logs.finalizeLoggers())
		}
		err = errors.Join(err, t.stopProfiler())
		err = errors.Join(err, t.leaveAgreedStopTogether(err))
		t.run = &run{} // drop the run's state
	}()

	if err := t.prepareData(); err != nil {
		return err
	}
	if err := t.emit(hookDataSetup, hookArgs{stage: fn}); err != nil {
		return err
	}
	if err := t.emit(hookSetup, hookArgs{stage: fn}); err != nil {
		return err
	}
	// As Lightning's Trainer._run (reset_metrics, after the setup hooks):
	// no run starts with an earlier run's values, which a callback would
	// otherwise monitor. A resumed Fit gets its checkpoint's back below.
	t.logs.resetMetrics()
	if fn == StageFit {
		if err := t.dropOptimizers(); err != nil {
			return fmt.Errorf("volt: %w", err)
		}
	}
	if freshEngine {
		if err := t.initFromLoadedModule(m, opts); err != nil {
			return fmt.Errorf("volt: %w", err)
		}
	}
	if opts.ckptPath != "" {
		if err := t.restore(opts.ckptPath, opts, fn); err != nil {
			return fmt.Errorf("volt: %w", err)
		}
	}
	// The loaders shuffle with this trainer's seed (restored on resume),
	// not the process-wide one.
	return body(data.WithSeed(ctx, t.cfg.seed))
}

// interrupted returns ctx's cause wrapped with where the run stopped.
func (t *Trainer) interrupted(ctx context.Context) error {
	return fmt.Errorf("volt: %s interrupted at epoch %d, global step %d: %w",
		t.state.Fn, t.CurrentEpoch(), t.GlobalStep(), context.Cause(ctx))
}
