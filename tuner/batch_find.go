package tuner

import (
	"context"
	"errors"
	"fmt"

	"github.com/voltml/volt"
)

// BatchSizeResult is the outcome of ScaleBatchSize.
type BatchSizeResult struct {
	// Size is the chosen batch size, now set on the data module.
	Size int
	// Trials are the trials run, in order.
	Trials []BatchTrial
}

// ScaleBatchSize finds the largest batch size whose training steps stay
// within opts' memory and step-time budgets, with Lightning's power or
// binsearch search, and sets it on dm. Like Lightning, the result may be a
// size no trial ran (power mode out of trials: the next doubling; binsearch:
// the midpoint once the interval is one wide); it is an error when no trial fit. Each trial trains opts.StepsPerTrial
// steps on its own trainer made from t.Config(), starting from t's weights and
// optimizer state when t has run, so t is left as it was; m's hooks other than
// TrainingStep and ConfigureOptimizers are not called.
func ScaleBatchSize(ctx context.Context, t *volt.Trainer, m volt.Module, dm volt.DataModule, opts BatchSizeOptions) (*BatchSizeResult, error) {
	if t == nil {
		return nil, errors.New("tuner.ScaleBatchSize: trainer is nil")
	}
	if m == nil {
		return nil, errors.New("tuner.ScaleBatchSize: module is nil")
	}
	sizer, ok := dm.(BatchSizer)
	if !ok {
		return nil, fmt.Errorf("tuner.ScaleBatchSize: data module %T does not implement tuner.BatchSizer (BatchSize() int, SetBatchSize(int))", dm)
	}
	train, ok := dm.(volt.TrainDataloader)
	if !ok {
		return nil, fmt.Errorf("tuner.ScaleBatchSize: data module %T has no TrainDataloader() data.Loader", dm)
	}
	o, err := opts.withDefaults(t.Config().Accelerator == "gpu")
	if err != nil {
		return nil, fmt.Errorf("tuner.ScaleBatchSize: invalid options:\n%w", err)
	}
	original := sizer.BatchSize()
	res := &BatchSizeResult{}
	covers := func(size int) bool {
		sizer.SetBatchSize(size)
		n := train.TrainDataloader().NumBatches()
		return n >= 0 && n <= 1
	}
	try := func(size int) (bool, error) {
		trial := BatchTrial{Size: size}
		defer func() { res.Trials = append(res.Trials, trial) }()
		if size < 1 {
			trial.Reason = "not a batch size"
			return false, nil
		}
		sizer.SetBatchSize(size)
		if err := runTrial(ctx, t, m, dm, o, &trial); err != nil {
			return false, err
		}
		return trial.Fits, nil
	}
	size, _, err := searchBatchSize(o.Mode, o.InitValue, o.MaxTrials, covers, try)
	if err == nil && (size < 1 || !anyFits(res.Trials)) {
		err = fmt.Errorf("no batch size fits the budgets (trials: %s)", describeTrials(res.Trials))
	}
	if err != nil {
		sizer.SetBatchSize(original)
		return res, fmt.Errorf("tuner.ScaleBatchSize: %w", err)
	}
	sizer.SetBatchSize(size)
	res.Size = size
	return res, nil
}

// runTrial trains opts.StepsPerTrial steps at the data module's batch size on
// a trainer of its own and records the measures in trial.
func runTrial(ctx context.Context, t *volt.Trainer, m volt.Module, dm volt.DataModule, o BatchSizeOptions, trial *BatchTrial) error {
	cfg := t.Config()
	probe := &batchProbe{opts: o, trial: trial}
	cfg.MaxEpochs, cfg.MaxSteps = -1, int64(o.StepsPerTrial)
	cfg.Callbacks = []volt.Callback{&warmStart{from: t.Store()}, probe}
	cfg.Loggers, cfg.DisableLoggers = nil, true
	cfg.LimitValBatches = volt.Batches(0)
	zero := 0
	cfg.NumSanityValSteps = &zero
	cfg.DisableCheckpointing, cfg.DisableModelSummary = true, true
	cfg.HandleSignals = false
	cfg.Log = quiet(cfg.Log)
	cfg.EnableProgressBar = volt.Ptr(false)
	tt, err := volt.NewTrainer(cfg)
	if err != nil {
		return fmt.Errorf("batch size %d: the trial's trainer: %w", trial.Size, err)
	}
	if err := tt.Fit(ctx, trialModule{m}, dm); err != nil {
		if reason, ok := allocationFailure(err); ok {
			trial.Fits, trial.Reason = false, reason // on a GPU, what bounds the search
			return nil
		}
		return fmt.Errorf("batch size %d: %w", trial.Size, err)
	}
	probe.finish()
	return nil
}

// trialModule is the module during a trial: its training step and optimizers.
type trialModule struct{ volt.Module }

// Unwrap returns the module tried (volt.ModuleWrapper: trials start from the
// weights volt.LoadModule gave it).
func (m trialModule) Unwrap() volt.Module { return m.Module }

// ConfigureOptimizers returns the module's optimizers (Adam 1e-3 without
// ConfigureOptimizers, as volt does).
func (m trialModule) ConfigureOptimizers() volt.Optimizers {
	if c, ok := m.Module.(volt.OptimizerConfigurer); ok {
		return c.ConfigureOptimizers()
	}
	return volt.Optimize(optimDefault())
}

// anyFits reports whether a trial fit.
func anyFits(trials []BatchTrial) bool {
	for _, tr := range trials {
		if tr.Fits {
			return true
		}
	}
	return false
}

// describeTrials lists the trials as "size: reason".
func describeTrials(trials []BatchTrial) string {
	s := ""
	for i, tr := range trials {
		if i > 0 {
			s += "; "
		}
		r := tr.Reason
		if tr.Fits {
			r = "fits"
		}
		s += fmt.Sprintf("%d: %s", tr.Size, r)
	}
	return s
}
