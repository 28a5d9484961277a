package tuner

import (
	"context"
	"errors"
	"fmt"

	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
)

// LRFindResult is the curve of a learning-rate sweep and its suggestion.
type LRFindResult struct {
	// LRs[i] is the learning rate of step i; Losses[i] the smoothed loss after
	// it (NaN for a step whose training step returned no loss).
	LRs, Losses []float64
	// SuggestedIndex is the point of steepest descent; -1 when the curve is
	// too short for a suggestion (then SuggestedLR is 0).
	SuggestedIndex int
	SuggestedLR    float64
	// StoppedEarly is set when the loss diverged before NumTraining steps.
	StoppedEarly bool
	// Mode is the sweep's mode (Exponential or Linear).
	Mode string
}

// LRFind sweeps the learning rate of m's one optimizer and suggests one, as
// Lightning's Tuner.lr_find. The sweep runs on a second trainer made from
// t.Config() (no loggers, checkpoints or validation; t's callbacks are not
// called), starting from t's weights and optimizer state when t has run, so t
// itself is left exactly as it was. The module's configured learning rate and
// schedulers are replaced by the sweep for its duration only. Hooks the module
// implements other than TrainingStep and ConfigureOptimizers are not called.
func LRFind(ctx context.Context, t *volt.Trainer, m volt.Module, dm volt.DataModule, opts LRFindOptions) (*LRFindResult, error) {
	if t == nil {
		return nil, errors.New("tuner.LRFind: trainer is nil")
	}
	if m == nil {
		return nil, errors.New("tuner.LRFind: module is nil")
	}
	if _, ok := dm.(volt.TrainDataloader); !ok {
		return nil, fmt.Errorf("tuner.LRFind: data module %T has no TrainDataloader() data.Loader", dm)
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("tuner.LRFind: invalid options:\n%w", err)
	}
	cfg := t.Config()
	if cfg.FastDevRun > 0 {
		return nil, errors.New("tuner.LRFind: Config.FastDevRun is set; the learning-rate finder needs real steps")
	}
	sweep := &sweepSchedule{mode: o.Mode, min: o.MinLR, max: o.MaxLR, n: o.NumTraining}
	rec := &lrRecorder{sweep: sweep}
	if !o.NoEarlyStop {
		rec.threshold = o.EarlyStopThreshold
	}
	warm := &warmStart{from: t.Store()}
	cfg.MaxEpochs = -1
	cfg.MaxSteps = int64(o.NumTraining)
	cfg.Callbacks = []volt.Callback{warm, rec}
	cfg.Loggers, cfg.DisableLoggers = nil, true
	cfg.LimitValBatches = volt.Batches(0)
	zero := 0
	cfg.NumSanityValSteps = &zero
	cfg.DisableCheckpointing, cfg.DisableModelSummary = true, true
	cfg.HandleSignals = false
	cfg.Log = quiet(cfg.Log)
	cfg.EnableProgressBar = volt.Ptr(false)
	st, err := volt.NewTrainer(cfg)
	if err != nil {
		return nil, fmt.Errorf("tuner.LRFind: the sweep's trainer: %w", err)
	}
	if err := st.Fit(ctx, &sweepModule{Module: m, sweep: sweep}, dm); err != nil {
		return nil, fmt.Errorf("tuner.LRFind: the sweep: %w", err)
	}
	res := &LRFindResult{LRs: rec.lrs, Losses: rec.losses, StoppedEarly: rec.stopped, Mode: o.Mode, SuggestedIndex: -1}
	if len(res.Losses) < len(res.LRs) {
		res.LRs = res.LRs[:len(res.Losses)]
	}
	if i, ok := Suggest(res.Losses, o.SkipBegin, o.SkipEnd); ok {
		res.SuggestedIndex, res.SuggestedLR = i, res.LRs[i]
		if o.Apply != nil {
			o.Apply(res.SuggestedLR)
		}
	}
	if o.CSVPath != "" {
		if err := res.WriteCSVFile(o.CSVPath); err != nil {
			return res, err
		}
	}
	if o.HTMLPath != "" {
		if err := res.WriteHTMLFile(o.HTMLPath); err != nil {
			return res, err
		}
	}
	return res, nil
}

// optimDefault is volt's optimizer for modules without ConfigureOptimizers.
func optimDefault() *optim.Optimizer { return optim.Adam(1e-3) }

// sweepModule is the module during the sweep: its training step, with its one
// optimizer driven by the sweep's schedule.
type sweepModule struct {
	volt.Module
	sweep *sweepSchedule
}

// Unwrap returns the module swept (volt.ModuleWrapper: the sweep starts from
// the weights volt.LoadModule gave it).
func (s *sweepModule) Unwrap() volt.Module { return s.Module }

// ConfigureOptimizers returns the module's one optimizer (Adam 1e-3 without
// ConfigureOptimizers, as volt does) with the sweep as its per-step scheduler.
func (s *sweepModule) ConfigureOptimizers() volt.Optimizers {
	var setups volt.Optimizers
	if c, ok := s.Module.(volt.OptimizerConfigurer); ok {
		setups = c.ConfigureOptimizers()
	} else {
		setups = volt.Optimize(optimDefault())
	}
	if len(setups) != 1 {
		panic(fmt.Sprintf("tuner.LRFind: %T.ConfigureOptimizers returned %d optimizers; the learning-rate finder works with one", s.Module, len(setups)))
	}
	setup := setups[0]
	setup.Scheduler, setup.Interval, setup.SchedulerFrequency, setup.Monitor = s.sweep, volt.IntervalStep, 1, ""
	return volt.Optimizers{setup}
}

// warmStart copies the caller's weights and optimizer state (not its learning
// rates, which the sweep sets) into the sweep's store when the fit starts.
type warmStart struct{ from *model.Store }

// OnFitStart copies the variables.
func (w *warmStart) OnFitStart(t *volt.Trainer) error {
	if w.from == nil {
		return nil
	}
	to := t.Store()
	for v := range w.from.IterVariables() {
		if !v.HasValue() || v.Path() == optim.StatePrefix(0)+"/lr" {
			continue
		}
		val, err := v.Value()
		if err != nil {
			return fmt.Errorf("tuner.LRFind: reading %s: %w", v.Path(), err)
		}
		if val, err = val.LocalClone(); err != nil {
			return fmt.Errorf("tuner.LRFind: copying %s: %w", v.Path(), err)
		}
		if dst := to.GetVariable(v.Path()); dst != nil {
			err = dst.SetValue(val)
		} else {
			_, err = to.CreateVariable(v.Path(), val)
		}
		if err != nil {
			return fmt.Errorf("tuner.LRFind: setting %s: %w", v.Path(), err)
		}
	}
	return nil
}
