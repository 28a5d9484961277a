package volt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"

	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/dist"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/logger"
	"github.com/voltml/volt/optim"
)

// Trainer runs the loops around a Module: Fit, Validate, Test and Predict.
// A Trainer is used from one goroutine at a time; the hooks it calls receive
// it and may read its state, log values and ask it to stop.
type Trainer struct {
	cfg      resolved
	loggers  []logger.Logger
	state    State
	progress Progress

	module Module
	eng    *engine.Engine
	hooks  *hookSet // the run's hooks, resolved when it starts

	auto        *automaticOptimization
	trainLoader data.Loader   // the loader of the current Fit
	trainLimit  int           // batches per training epoch (-1: all of the loader)
	fit         *fitLoop      // the Fit in progress
	curParts    []data.Part   // the parts of the batch being traced (combined loaders)
	signals     *signalWatch  // Config.HandleSignals, during Fit
	evalLoaders []data.Loader // the loaders of the evaluation or prediction in progress
	evals       map[evalKey]*evalProgram
	trainRes    *results
	// trainMetrics holds the metric objects the training steps log and the
	// state they carry.
	trainMetrics *metricTable
	evalRes      map[RunningStage]*results
	curRes       *results // receives Trainer.Log calls; nil outside runs
	curBatch     int      // size of the batch being processed, for Log weights
	curLoader    int
	numLoaders   int
	fx           hookID // the hook being called, for Log's defaults

	dataModule     DataModule
	lastCheckpoint string       // the last file SaveCheckpoint wrote
	resume         *resumePoint // where the next Fit continues, after a restore
	loaded         *loadCheck   // what the last restore set, until the first trace checks it
	// restoredSchedulers holds the scheduler states of a restored checkpoint
	// (nil when Fit does not resume), applied when Fit starts.
	restoredSchedulers *[][]byte
	scaler             *optim.LossScaler // "16-mixed" dynamic loss scaling

	shouldStop     bool
	stopReason     string
	skipEpoch      bool
	saidOnce       map[string]bool
	callbackM      map[string]float64
	loggedM        map[string]float64
	progBarM       map[string]float64
	hparamsWritten bool

	// group is the data-parallel job (dist.Single() alone); distributed is
	// set when it has more than one rank.
	group       dist.Group
	distributed bool
	reducer     *gradReducer // the gradient all-reduce, when distributed
	// agreedInterrupt: every rank agreed to stop on a signal or a
	// cancellation, so a run ending with that error does not abort the job.
	agreedInterrupt bool
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
		evals:     map[evalKey]*evalProgram{},
		trainRes:  newResults(),
		evalRes:   map[RunningStage]*results{},
		saidOnce:  map[string]bool{},
		callbackM: map[string]float64{}, loggedM: map[string]float64{},
		progBarM: map[string]float64{},
	}
	if r.FastDevRun > 0 {
		r.Log.Info(fmt.Sprintf("volt: FastDevRun=%d: one epoch of %d training, validation and test batch(es); loggers, checkpointing and early stopping are off", r.FastDevRun, r.FastDevRun))
	}
	switch {
	case len(r.Loggers) > 0:
		t.loggers = r.Loggers
	case !r.DisableLoggers:
		csv, err := logger.NewCSV(logger.CSVConfig{SaveDir: r.DefaultRootDir, Name: "volt_logs"})
		if err != nil {
			return nil, fmt.Errorf("volt.NewTrainer: default CSV logger in %s: %w", filepath.Join(r.DefaultRootDir, "volt_logs"), err)
		}
		t.loggers = []logger.Logger{csv}
	}
	if err := t.setupDistributed(); err != nil {
		return nil, fmt.Errorf("volt.NewTrainer: %w", err)
	}
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
func (t *Trainer) Loggers() []logger.Logger { return t.loggers }

// ShouldStop reports whether a stop was requested.
func (t *Trainer) ShouldStop() bool { return t.shouldStop }

// Stop asks Fit to stop at the end of the current batch; the request is
// honoured once MinEpochs and MinSteps are reached. The reason is reported once.
// In a data-parallel job a stop asked on any rank stops every rank after the
// same batch.
func (t *Trainer) Stop(reason string) {
	if !t.shouldStop {
		t.shouldStop, t.stopReason = true, reason
	}
}

// SkipRestOfEpoch, called from OnTrainBatchStart, ends the current training
// epoch before the batch (Lightning's -1 from on_train_batch_start).
func (t *Trainer) SkipRestOfEpoch() { t.skipEpoch = true }

// CallbackMetrics returns the latest value of every logged metric, including
// those kept out of the loggers: what callbacks such as early stopping monitor.
func (t *Trainer) CallbackMetrics() map[string]float64 { return maps.Clone(t.callbackM) }

// LoggedMetrics returns the latest values sent to the loggers.
func (t *Trainer) LoggedMetrics() map[string]float64 { return maps.Clone(t.loggedM) }

// ProgressBarMetrics returns the latest values logged with ProgBar.
func (t *Trainer) ProgressBarMetrics() map[string]float64 { return maps.Clone(t.progBarM) }

// Log records a value from a hook. In training batch hooks it defaults to
// per-step logging, elsewhere to an epoch value (a mean weighted by batch size).
// Outside a run the call is ignored with a warning.
func (t *Trainer) Log(name string, value float64, opts ...LogOption) {
	if t.curRes == nil {
		t.sayOnce("log-outside", "volt: Trainer.Log called outside a running loop; value ignored", slog.String("metric", name))
		return
	}
	batchLevel := t.fx == hookOnTrainBatchStart || t.fx == hookOnTrainBatchEnd
	o := resolveLogOptions(defaultLogOptions(t.state.Stage, batchLevel), opts)
	key := name + dataloaderSuffix(t.curLoader, t.numLoaders)
	m, err := t.curRes.entry(key, o)
	if err != nil {
		t.sayOnce("log-"+key, "volt: "+err.Error())
		return
	}
	m.add(value, t.curBatch)
	if m.opts.syncDist && t.distributed {
		if err := t.syncStepValue(m); err != nil {
			t.sayOnce("log-sync-"+key, "volt: "+err.Error())
		}
	}
	t.publishStep(m)
}

// sayOnce logs msg at info level the first time key is seen.
func (t *Trainer) sayOnce(key, msg string, attrs ...any) {
	if t.saidOnce[key] {
		return
	}
	t.saidOnce[key] = true
	t.cfg.Log.Info(msg, attrs...)
}

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
	t.eng, t.module = eng, m
	t.scaler = newScaler(t.cfg.precision)
	if t.scaler != nil {
		if err := t.setLossScale(); err != nil {
			return err
		}
	}
	t.auto = nil
	t.evals = map[evalKey]*evalProgram{}
	t.trainMetrics = newMetricTable()
	t.trainRes = newResults()
	t.evalRes = map[RunningStage]*results{}
	return nil
}

// run is the lifecycle shared by Fit, Validate, Test and Predict: setup,
// body, OnException on failure, then teardown (always; the data module's
// first, then the callbacks' and the module's in their usual order, as
// Lightning does) and the status.
func (t *Trainer) run(ctx context.Context, fn Stage, m Module, dm DataModule, options []RunOption, body func(ctx context.Context) error) (err error) {
	if m == nil {
		return ErrNoTrainingStep
	}
	if t.state.Status == StatusRunning {
		return fmt.Errorf("volt: Trainer.%s called while the trainer is already running %s", fn, t.state.Fn)
	}
	if err := errors.Join(checkSignatures("module", m, onModule), checkSignatures("data module", dm, onDataModule)); err != nil {
		return fmt.Errorf("volt: %w", err)
	}
	if err := t.ensureEngine(m); err != nil {
		return fmt.Errorf("volt: %w", err)
	}
	t.state = State{Fn: fn, Status: StatusRunning}
	t.shouldStop, t.stopReason, t.skipEpoch = false, "", false
	t.agreedInterrupt = false
	t.hooks = resolveHooks(t.cfg.Callbacks, t.cfg.FastDevRun > 0, m, dm)
	t.dataModule = dm
	var opts runOptions
	for _, o := range options {
		o(&opts)
	}

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
		t.curRes, t.evalLoaders = nil, nil
		switch {
		case err == nil:
			t.state.Status = StatusFinished
		case t.state.Status == StatusRunning:
			t.state.Status = StatusFailed
		}
		if fn != StagePredict {
			err = errors.Join(err, t.finalizeLoggers())
		}
	}()

	if err := t.emit(hookDataPreparer, hookArgs{}); err != nil {
		return err
	}
	if err := t.emit(hookDataSetup, hookArgs{stage: fn}); err != nil {
		return err
	}
	if err := t.emit(hookSetup, hookArgs{stage: fn}); err != nil {
		return err
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
