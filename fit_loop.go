package volt

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/voltml/volt/data"
)

// Fit trains m on the data module's training loader, validating on its
// validation loaders after every CheckValEveryNEpoch epochs, until MaxEpochs,
// MaxSteps or a stop request (honoured after MinEpochs and MinSteps). A
// cancelled ctx stops it after the current batch; the error then wraps
// context.Cause(ctx).
func (t *Trainer) Fit(ctx context.Context, m Module, dm DataModule, opts ...RunOption) error {
	return t.lifecycle(ctx, StageFit, m, dm, opts, func(ctx context.Context) error {
		loop, err := t.newFitLoop(dm)
		if err != nil {
			return err
		}
		t.run.fit = loop
		defer func() { t.run.fit, t.run.trainLoader = nil, nil }() // NumTrainingBatches is -1 outside Fit
		if t.cfg.HandleSignals {
			t.run.signals = watchSignals()
			defer func() { t.run.signals.stop(); t.run.signals = nil }()
		}
		defer loop.closeFirst()
		return loop.run(ctx)
	})
}

// fitLoop runs epochs until one of its stop conditions holds.
type fitLoop struct {
	t          *Trainer
	dm         DataModule
	ckpt       *defaultCheckpoint
	first      *epochIterator // the pass prepare opened, until an epoch takes it
	train      data.Loader
	val        []data.Loader
	validating bool
	// trainLimit and valLimits are the batches each loop runs (-1: all).
	trainLimit int
	valLimits  []int
	// valEvery is the validation interval in batches (within the epoch, or
	// across epochs when acrossEpochs); 0 with valAtEnd means after the last
	// batch; valEveryTime is a wall-clock interval.
	valEvery     int
	acrossEpochs bool
	valEveryTime time.Duration
	lastVal      time.Time
	// agreedValTime: at the last agreement across ranks, some rank's clock
	// said an Every(d) validation was due (clockSaysValidate).
	agreedValTime bool
	valDue        bool // a validation waits for the end of the accumulation window
	// epochValuesStarted: the training values were emptied before
	// OnTrainStart, whose values the first epoch keeps.
	epochValuesStarted bool
	// valAfterBatch: in OnTrainBatchEnd, the cadence puts a validation
	// right after this batch (Trainer.ValidatesAfterBatch).
	valAfterBatch bool
	lastStepped   bool // the last training batch stepped the optimizer
	// epochFinished: the epoch reached its last batch (not ended early), so
	// its epoch-interval schedulers step.
	epochFinished bool
	// plateauPending: in this epoch's OnTrainEpochEnd, before the plateau
	// schedulers step.
	plateauPending bool
	// trainLoadEpoch is the epoch the training loader was last asked for;
	// valLoadEpoch the epoch the validation loaders were, when
	// valLoadCounted (ReloadDataloadersEveryNEpochs).
	trainLoadEpoch int
	valLoadEpoch   int
	valLoadCounted bool
	// batchDTypes refuses a training batch whose dtypes differ from the
	// run's first.
	batchDTypes batchDTypes
}

func (t *Trainer) newFitLoop(dm DataModule) (*fitLoop, error) {
	l := &fitLoop{t: t, dm: dm, ckpt: t.newDefaultCheckpoint()}
	if err := l.loadData(true, true); err != nil {
		return nil, err
	}
	// volt asks for every loader when Fit starts; Lightning counts that load
	// of the validation loaders only when the first epoch validates, and a
	// resumed Fit's load of the training loader at the epoch count the
	// checkpoint recorded (one less than the epoch it resumes with after an
	// epoch-end checkpoint).
	l.valLoadEpoch, l.valLoadCounted = t.CurrentEpoch(), l.validatesInEpoch()
	if t.ckpt.fit.resume != nil {
		l.trainLoadEpoch = t.ckpt.fit.restoredEpochs
	}
	fresh := t.perModule.optimization == nil
	if fresh {
		o, err := t.newOptimization()
		if err != nil {
			return nil, err
		}
		t.perModule.optimization = o
	}
	if fresh || t.ckpt.schedulers.states != nil {
		if err := t.startSchedulers(fresh); err != nil {
			return nil, err
		}
	}
	if err := t.logs.logHyperparams(t.module, dm); err != nil {
		return nil, err
	}
	return l, nil
}

// loadData asks the data module for its training loader (train) and its
// validation loaders (val), keeping the others, and resolves the limits,
// overfitting and validation cadence against their lengths.
func (l *fitLoop) loadData(train, val bool) error {
	t, dm := l.t, l.dm
	if train {
		l.train = nil
		if tl, ok := dm.(TrainDataloader); ok {
			l.train = tl.TrainDataloader()
		}
		if l.train == nil {
			return fmt.Errorf("volt: Fit needs a training loader: %T has no TrainDataloader() or it returned nil", dm)
		}
		if err := checkLoaders("training", []data.Loader{l.train}); err != nil {
			return err
		}
		l.train, _ = t.shardLoaders(l.train, nil)
		l.trainLoadEpoch = t.CurrentEpoch()
	}
	if val {
		l.val = nil
		if vl, ok := dm.(ValDataloaders); ok {
			l.val = vl.ValDataloaders()
		}
		if err := checkLoaders("validation", l.val); err != nil {
			return err
		}
		_, l.val = t.shardLoaders(nil, l.val)
	}
	cfg := &t.cfg
	var err error
	if over := cfg.OverfitBatches; over != nil && over != Batches(0) {
		if dl, ok := l.train.(*data.DataLoader); ok && dl.Shuffle {
			t.sayOnce("overfit-shuffle", "volt: OverfitBatches: the training loader shuffles; volt turns shuffling off so that every epoch sees the same batches")
			unshuffled := *dl
			unshuffled.Shuffle = false
			l.train = &unshuffled
		}
		if l.trainLimit, err = limitOf("OverfitBatches", over, l.train.NumBatches()); err != nil {
			return err
		}
		l.val = []data.Loader{l.train}
		l.valLimits = []int{l.trainLimit}
	} else {
		if l.trainLimit, err = limitOf("LimitTrainBatches", cfg.LimitTrainBatches, l.train.NumBatches()); err != nil {
			return err
		}
		l.valLimits = make([]int, len(l.val))
		for i, v := range l.val {
			if l.valLimits[i], err = limitOf("LimitValBatches", cfg.LimitValBatches, v.NumBatches()); err != nil {
				return err
			}
		}
	}
	t.run.trainLoader = l.train
	t.run.trainLimit = l.trainLimit
	_, hasValStep := t.module.(ValidationStepper)
	switch {
	case len(l.val) > 0 && !hasValStep:
		t.sayOnce("no-val-step", "volt: validation loaders given but the module has no ValidationStep; validation is skipped", slog.String("module", fmt.Sprintf("%T", t.module)))
	case cfg.LimitValBatches == Batches(0):
		t.sayOnce("val-off", "volt: LimitValBatches=Batches(0): validation is off")
	case len(l.val) > 0:
		l.validating = true
	}
	if l.trainLimit == 0 {
		t.sayOnce("train-off", "volt: LimitTrainBatches gives 0 batches: training is off")
	} else if l.train.NumBatches() == 0 {
		return emptyTrainingError(l.train, "has no batches")
	}
	if !train {
		return nil
	}
	return l.resolveValInterval()
}

// reloadTrainDue reports whether ReloadDataloadersEveryNEpochs asks for the
// training loader again before this epoch: n epochs after it was last asked
// (Lightning's _should_reload_train_dl).
func (l *fitLoop) reloadTrainDue() bool {
	n := l.t.cfg.ReloadDataloadersEveryNEpochs
	return n > 0 && l.t.CurrentEpoch()-l.trainLoadEpoch >= n
}

// reloadValDue reports whether ReloadDataloadersEveryNEpochs asks for the
// validation loaders again right before this validation run: n epochs after
// they were last asked for a validation, or, when Fit started in an epoch
// that does not validate, at its first validation (Lightning's
// _should_reload_val_dl, which does not count a load for a sanity check
// outside a validation epoch).
func (l *fitLoop) reloadValDue() bool {
	n := l.t.cfg.ReloadDataloadersEveryNEpochs
	return n > 0 && (!l.valLoadCounted || l.t.CurrentEpoch()-l.valLoadEpoch >= n)
}

// validatesInEpoch reports whether Fit validates in the current epoch
// (Lightning's _should_check_val_epoch).
func (l *fitLoop) validatesInEpoch() bool {
	t := l.t
	return l.validating && (l.acrossEpochs || (t.CurrentEpoch()+1)%t.cfg.valEveryEpochs == 0)
}

// emptyTrainingError says that the training loader gives nothing (what is
// wrong), describing it, and how to turn training off on purpose.
func emptyTrainingError(train data.Loader, what string) error {
	desc := fmt.Sprintf("%T", train)
	if dl, ok := train.(*data.DataLoader); ok && dl.Dataset != nil {
		desc += fmt.Sprintf(": %d examples, BatchSize %d", dl.Dataset.Len(), dl.BatchSize)
		if dl.DropLast {
			desc += ", DropLast"
		}
	}
	return fmt.Errorf("volt: Fit: the training loader %s (%s); give it training data, or set Config.LimitTrainBatches to volt.Batches(0) to turn training off", what, desc)
}

// MonitorsAtTrainEpochEnd reports whether, by Lightning's rule, the
// monitoring callbacks (callback.EarlyStopping, callback.ModelCheckpoint)
// act at OnTrainEpochEnd rather than at OnValidationEnd: validation in
// every epoch (CheckValEveryNEpoch 1) with ValCheckInterval unset,
// Fraction(1) or Batches(1). Lightning tests val_check_interval == 1.0,
// which the integer 1 (validate after every batch) passes too.
func (t *Trainer) MonitorsAtTrainEpochEnd() bool {
	if t.cfg.valEveryEpochs != 1 {
		return false
	}
	switch t.cfg.ValCheckInterval {
	case nil, Fraction(1), Batches(1):
		return true
	}
	return false
}

// resolveValInterval turns Config.ValCheckInterval into a batch count or a
// duration, checking it against the epoch's length.
func (l *fitLoop) resolveValInterval() error {
	t := l.t
	n := effectiveBatches(l.train.NumBatches(), l.trainLimit)
	l.valEvery, l.acrossEpochs, l.valEveryTime = 0, false, 0
	switch v := t.cfg.ValCheckInterval.(type) {
	case Batches:
		if n >= 0 && int(v) > n {
			return fmt.Errorf("volt: Config.ValCheckInterval=%s is larger than the training epoch (%d batches) while Config.CheckValEveryNEpoch=%d applies per epoch; use volt.AcrossEpochs(%d) to count batches across epochs",
				v, n, t.cfg.valEveryEpochs, int(v))
		}
		l.valEvery = int(v)
	case Fraction:
		if n < 0 {
			if v != 1 {
				return fmt.Errorf("volt: Config.ValCheckInterval=%s needs a training loader with a known length; use volt.Batches(n) with iterable data", v)
			}
			break
		}
		l.valEvery = max(1, int(float64(n)*float64(v)))
	case AcrossEpochs:
		l.valEvery, l.acrossEpochs = int(v), true
	case Every:
		l.valEveryTime = time.Duration(v)
		l.lastVal = time.Now()
	}
	return nil
}

func (l *fitLoop) run(ctx context.Context) error {
	t := l.t
	if err := t.emit(hookOnFitStart, hookArgs{}); err != nil {
		return err
	}
	if err := l.prepare(ctx); err != nil {
		return err
	}
	t.printSummary()
	if l.validating && t.cfg.sanitySteps != 0 {
		if err := t.evalLoop(RunningValidate).sanityCheck(ctx, l.val, l.valLimits); err != nil {
			return err
		}
	}
	t.state.Stage = RunningTrain
	if reason := l.done(); reason != "" && !t.ckpt.fit.inEpoch() {
		// Nothing to train (a run resumed at its end): Lightning's fit
		// loop skips, with no OnTrainStart or OnTrainEnd. A run resumed
		// inside an epoch finishes that epoch first (its end hooks).
		t.cfg.Log.Info("volt: Fit stopped: " + reason)
		if err := l.sendResumedEpochLogs(); err != nil {
			return err
		}
		return t.emit(hookOnFitEnd, hookArgs{})
	}
	// A value logged in OnTrainStart is a value of the first epoch trained,
	// as in Lightning, which empties its training values when an epoch's
	// row is sent, not when the next epoch starts: unless the run resumes
	// inside an epoch, a resumed epoch's row goes first and the first
	// epoch's values start here.
	if !t.ckpt.fit.inEpoch() {
		if err := l.sendResumedEpochLogs(); err != nil {
			return err
		}
		t.logs.resetTrainMetricState()
		l.epochValuesStarted = true
	}
	t.run.res, t.run.loader, t.run.numLoaders, t.run.batchSize = t.logs.trainRes, 0, 1, 1
	err := t.emit(hookOnTrainStart, hookArgs{})
	t.run.res = nil
	if err != nil {
		return err
	}
	for {
		if err := t.agreeBeforeEpoch(ctx); err != nil {
			return err
		}
		reason := l.done()
		if reason != "" {
			t.cfg.Log.Info("volt: Fit stopped: " + reason)
			break
		}
		if err := l.runEpoch(ctx); err != nil {
			return err
		}
	}
	if err := t.measureExchange(); err != nil {
		return err
	}
	if err := t.emit(hookOnTrainEnd, hookArgs{}); err != nil {
		return err
	}
	return t.emit(hookOnFitEnd, hookArgs{})
}

// done returns why training should stop, or "". A run resumed inside an
// epoch first finishes that epoch's end (the validation due, OnTrainEpochEnd,
// the epoch values), as the run it resumes did, even when MaxSteps was
// reached at the checkpoint.
func (l *fitLoop) done() string {
	t := l.t
	p := &t.progress
	if t.cfg.maxSteps > 0 && p.OptimizerSteps >= t.cfg.maxSteps && !t.ckpt.fit.inEpoch() {
		return fmt.Sprintf("MaxSteps=%d reached.", t.cfg.maxSteps)
	}
	if t.cfg.maxEpochs >= 0 && p.Epoch.Total.Completed >= int64(t.cfg.maxEpochs) {
		return fmt.Sprintf("MaxEpochs=%d reached.", t.cfg.maxEpochs)
	}
	if t.stop.requested && t.canStopEarly() {
		return "stop requested: " + t.stop.reason
	}
	return ""
}

// sendResumedEpochLogs sends, once, the rows of the epoch whose
// OnTrainEpochEnd took the checkpoint this Fit resumed from: that
// checkpoint comes before the epoch's values reached the loggers, whose
// files the resumed run cut back to it. They go before the next epoch, or
// before the resumed Fit ends when it has nothing left to train (a run
// resumed after it finished), so that no row the run logged is lost.
func (l *fitLoop) sendResumedEpochLogs() error {
	if !l.t.ckpt.fit.takeEpochLogs() {
		return nil
	}
	return l.t.logs.sendEndedEpochLogs()
}

// canStopEarly reports whether MinEpochs and MinSteps are met, saying once
// when a stop request has to wait for them. As in Lightning, MinSteps
// without MinEpochs also keeps the first epoch (its min_epochs becomes 1).
func (t *Trainer) canStopEarly() bool {
	p := &t.progress
	minEpochs := t.cfg.MinEpochs
	if minEpochs == 0 && t.cfg.MinSteps > 0 {
		minEpochs = 1
	}
	ok := p.Epoch.Total.Completed >= int64(minEpochs) && p.OptimizerSteps >= t.cfg.MinSteps
	if !ok {
		t.sayOnce("stop-before-min", fmt.Sprintf("volt: stop requested (%s) but MinEpochs=%d / MinSteps=%d not reached; training continues",
			t.stop.reason, minEpochs, t.cfg.MinSteps))
	}
	return ok
}

// prepare traces the training step on the first training batch before
// training starts (see optimization.prepare).
//
// The batch it pulls is the first one the epoch trains on: the pass stays
// open (l.first) and runBatches continues it (epochBatches), so a streaming
// loader is read once, and a resumed run pulls from its resume point.
func (l *fitLoop) prepare(ctx context.Context) error {
	t := l.t
	if l.trainLimit == 0 {
		return nil
	}
	epoch, skip := t.CurrentEpoch(), t.ckpt.fit.batchesDone()
	batches := l.openEpoch(ctx, epoch, skip)
	b, err, ok := batches.first()
	if !ok {
		batches.close()
		if skip == 0 && ctx.Err() == nil {
			return emptyTrainingError(l.train, fmt.Sprintf("yielded no batches in epoch %d", epoch))
		}
		return nil
	}
	l.first = batches
	if err != nil {
		return fmt.Errorf("training loader: %w", err)
	}
	if err := t.perModule.optimization.prepare(b); err != nil {
		return &StepError{Step: "TrainingStep", Epoch: t.CurrentEpoch(), Err: t.explainShapeClash(err)}
	}
	return t.startDistributedFit()
}

// openEpoch opens the training loader's pass over epoch from batch skip,
// looking one batch ahead.
func (l *fitLoop) openEpoch(ctx context.Context, epoch, skip int) *epochIterator {
	// A resumed stream starts from its saved position (stream_resume.go).
	// The loop reads l.trainLimit batches of each epoch and no other, as
	// Lightning's: a RandomSampler's order follows torch's (WithBatchesRead).
	ctx = data.WithBatchesRead(l.t.streamContext(ctx, l.train, epoch, skip), l.trainLimit)
	return l.t.openEpoch(ctx, actTrainNext, l.train, epoch, skip, l.trainLimit, true)
}

// epochBatches returns the training batches of epoch from skip on: the pass
// prepare opened when it is that one, else a new pass.
func (l *fitLoop) epochBatches(ctx context.Context, epoch, skip int) *epochIterator {
	if f := l.first; f != nil && f.epoch == epoch && f.skip == skip {
		l.first = nil
		f.limit = l.trainLimit // a reload since prepare may have changed it
		return f
	}
	l.closeFirst()
	return l.openEpoch(ctx, epoch, skip)
}

// closeFirst stops the pass prepare opened, if no epoch took it.
func (l *fitLoop) closeFirst() {
	if l.first != nil {
		l.first.close()
		l.first = nil
	}
}
