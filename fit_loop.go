package volt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/voltml/volt/data"
)

// Fit trains m on the data module's training loader, validating on its
// validation loaders after every CheckValEveryNEpoch epochs, until MaxEpochs,
// MaxSteps or a stop request (honoured after MinEpochs and MinSteps). A
// cancelled ctx stops it after the current batch; the error then wraps
// context.Cause(ctx).
func (t *Trainer) Fit(ctx context.Context, m Module, dm DataModule, opts ...RunOption) error {
	return t.run(ctx, StageFit, m, dm, opts, func(ctx context.Context) error {
		loop, err := t.newFitLoop(dm)
		if err != nil {
			return err
		}
		return loop.run(ctx)
	})
}

// fitLoop runs epochs until one of its stop conditions holds.
type fitLoop struct {
	t          *Trainer
	train      data.Loader
	val        []data.Loader
	validating bool
}

func (t *Trainer) newFitLoop(dm DataModule) (*fitLoop, error) {
	tl, ok := dm.(TrainDataloader)
	if !ok || tl.TrainDataloader() == nil {
		return nil, fmt.Errorf("volt: Fit needs a training loader: %T has no TrainDataloader() or it returned nil", dm)
	}
	l := &fitLoop{t: t, train: tl.TrainDataloader()}
	t.trainLoader = l.train
	if vl, ok := dm.(ValDataloaders); ok {
		l.val = vl.ValDataloaders()
	}
	if err := errors.Join(checkLoaders("training", []data.Loader{l.train}), checkLoaders("validation", l.val)); err != nil {
		return nil, err
	}
	_, hasValStep := t.module.(ValidationStepper)
	switch {
	case len(l.val) > 0 && !hasValStep:
		t.sayOnce("no-val-step", "volt: validation loaders given but the module has no ValidationStep; validation is skipped", slog.String("module", fmt.Sprintf("%T", t.module)))
	case len(l.val) > 0:
		l.validating = true
	}
	fresh := t.auto == nil
	if fresh {
		auto, err := t.newAutomaticOptimization()
		if err != nil {
			return nil, err
		}
		t.auto = auto
	}
	if fresh || t.schedulerStates != nil {
		if err := t.startSchedulers(); err != nil {
			return nil, err
		}
	}
	if err := t.logHyperparams(dm); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *fitLoop) run(ctx context.Context) error {
	t := l.t
	if err := callHook(t, "OnFitStart", func(h OnFitStart) error { return h.OnFitStart(t) }); err != nil {
		return err
	}
	if l.validating && t.cfg.sanitySteps != 0 && t.resume == nil {
		if err := t.sanityCheck(ctx, l.val); err != nil {
			return err
		}
	}
	t.state.Stage = RunningTrain
	if err := callHook(t, "OnTrainStart", func(h OnTrainStart) error { return h.OnTrainStart(t) }); err != nil {
		return err
	}
	for {
		reason := l.done()
		if reason != "" {
			t.cfg.Log.Info("volt: Fit stopped: " + reason)
			break
		}
		if err := l.runEpoch(ctx); err != nil {
			return err
		}
	}
	if err := callHook(t, "OnTrainEnd", func(h OnTrainEnd) error { return h.OnTrainEnd(t) }); err != nil {
		return err
	}
	return callHook(t, "OnFitEnd", func(h OnFitEnd) error { return h.OnFitEnd(t) })
}

// done returns why training should stop, or "".
func (l *fitLoop) done() string {
	t := l.t
	p := &t.progress
	if t.cfg.maxSteps > 0 && p.OptimizerSteps >= t.cfg.maxSteps {
		return fmt.Sprintf("MaxSteps=%d reached.", t.cfg.maxSteps)
	}
	if t.cfg.maxEpochs >= 0 && p.Epoch.Total.Completed >= int64(t.cfg.maxEpochs) {
		return fmt.Sprintf("MaxEpochs=%d reached.", t.cfg.maxEpochs)
	}
	if t.shouldStop && t.canStopEarly() {
		return "stop requested: " + t.stopReason
	}
	return ""
}

// canStopEarly reports whether MinEpochs and MinSteps are met, saying once
// when a stop request has to wait for them.
func (t *Trainer) canStopEarly() bool {
	p := &t.progress
	ok := p.Epoch.Total.Completed >= int64(t.cfg.MinEpochs) && p.OptimizerSteps >= t.cfg.MinSteps
	if !ok {
		t.sayOnce("stop-before-min", fmt.Sprintf("volt: stop requested (%s) but MinEpochs=%d / MinSteps=%d not reached; training continues",
			t.stopReason, t.cfg.MinEpochs, t.cfg.MinSteps))
	}
	return ok
}
