package volt

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/voltml/volt/data"
)

// runEpoch runs one training epoch (with the validations it schedules),
// then the epoch-end hooks and logging.
func (l *fitLoop) runEpoch(ctx context.Context) error {
	t := l.t
	defer t.profile(actTrainEpoch)()
	p := &t.progress
	epoch := t.CurrentEpoch()
	// A run restored mid-epoch continues with the next unseen batch, keeping
	// the epoch's counters and metric accumulators.
	at := t.ckpt.fit.enterEpoch()
	if at.resumed {
		l.valDue = at.validationPending
		// A checkpoint the resumed run takes before its first batch (in
		// the validation it resumes with) records the same.
		l.lastStepped = at.stepped
	} else {
		if err := l.sendResumedEpochLogs(); err != nil {
			return err
		}
		if l.reloadTrainDue() {
			if err := l.loadData(true, false); err != nil {
				return err
			}
		}
		p.Epoch.ready()
		p.TrainBatch.resetCurrent()
		t.logs.resetTrainMetricState()
	}
	// A run restored after the epoch's last batch has only the epoch's end
	// left, its plateau step included. (A checkpoint without the flag is
	// from before it was saved: the loader's length tells.)
	l.epochFinished = at.resumed && (at.lastBatchDone ||
		at.skip > 0 && at.skip == effectiveBatches(l.train.NumBatches(), l.trainLimit))
	t.state.Stage = RunningTrain
	t.run.res, t.run.loader, t.run.numLoaders, t.run.batchSize = t.logs.trainRes, 0, 1, 1
	t.run.skipEpoch = false
	// A checkpoint taken in OnTrainBatchEnd comes before that batch's step
	// values reached the loggers: send them (or drop them) first.
	if at.stepLogs != nil {
		if err := t.logs.endStepLogs(*at.stepLogs); err != nil {
			return err
		}
	}
	p.At = PointTrainEpochStart
	// Until the resumed epoch's OnTrainEpochStart has run, a checkpoint
	// resumes where the restored one did (fitLoopPart.resumePointNow).
	err := t.emit(hookOnTrainEpochStart, hookArgs{})
	t.ckpt.fit.reached()
	if err != nil {
		return err
	}
	if !at.resumed {
		p.Epoch.started()
	}
	if err := t.agreeAtEpochStart(ctx); err != nil {
		return err
	}
	// A stop requested before the first batch (in OnTrainEpochStart) ends
	// the epoch before it: no batch, no validation, then the epoch-end hooks
	// (Lightning's epoch loop checks should_stop before every batch).
	if !(t.stop.requested && t.canStopEarly()) {
		// A checkpoint taken after a batch, before the validation it
		// scheduled, runs that validation first.
		if at.resumed && !at.validationDone && at.skip > 0 && l.validationDue(at.skip-1, l.epochFinished, at.stepped) {
			if err := l.validate(ctx); err != nil {
				return err
			}
		}
		// After the epoch's last batch no batch is left, even where the
		// loader has more (LimitTrainBatches); after the step that reached
		// MaxSteps the epoch ends.
		if !l.epochFinished && !(at.resumed && t.cfg.maxSteps > 0 && p.OptimizerSteps >= t.cfg.maxSteps) {
			if err := l.runBatches(ctx, epoch, at.skip); err != nil {
				return err
			}
		}
	}
	p.Epoch.processed()

	// Epoch values are visible to OnTrainEpochEnd and the plateau
	// schedulers, then logged with whatever it logs.
	if err := t.logs.publishEpochValues(t.logs.trainRes, t.logs.trainMetrics); err != nil {
		return err
	}
	p.At = PointTrainEpochEnd
	// A checkpoint taken in OnTrainEpochEnd holds the plateau step that
	// follows it (schedulerPart.save), so that a run resumed from it goes on
	// with the same learning rate.
	l.plateauPending = l.epochFinished
	t.run.epochEndLogs = true // a checkpoint taken now records it
	if err := t.emit(hookOnTrainEpochEnd, hookArgs{}); err != nil {
		return err
	}
	l.plateauPending = false
	if l.epochFinished {
		if err := t.stepSchedulers(IntervalEpoch, int64(epoch+1), true); err != nil {
			return err
		}
	}
	if err := t.logs.sendEpochLogs(); err != nil {
		return err
	}
	t.run.epochEndLogs = false
	if err := l.ckpt.save(t); err != nil {
		return err
	}
	p.Epoch.completed()
	t.run.res = nil
	return nil
}

// runBatches runs the epoch's batches from skip on; the pass looks one
// batch ahead, so that the last batch is known (it closes the accumulation
// window and triggers the end-of-epoch validation).
func (l *fitLoop) runBatches(ctx context.Context, epoch, skip int) error {
	t := l.t
	if l.trainLimit == 0 {
		return nil
	}
	batches := l.epochBatches(ctx, epoch, skip)
	defer batches.close()
	for {
		b, last, err := batches.Next()
		if err != nil {
			if ctx.Err() != nil {
				return t.interrupted(ctx)
			}
			return fmt.Errorf("training loader, epoch %d, batch %d: %w", epoch, t.progress.TrainBatch.Current.Ready, err)
		}
		if b == nil {
			return nil
		}
		end, err := l.runBatch(ctx, b, last)
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return t.interrupted(ctx)
		}
		if end || last {
			return nil
		}
	}
}

// runBatch runs one training batch with its hooks, then any validation due,
// and reports whether the epoch must end after it.
func (l *fitLoop) runBatch(ctx context.Context, b *data.Batch, lastInEpoch bool) (stop bool, err error) {
	t := l.t
	defer t.profile(actTrainBatch)()
	p := &t.progress
	batchIdx := int(p.TrainBatch.Current.Ready)
	if err := l.batchDTypes.check(b, batchIdx); err != nil {
		return false, fmt.Errorf("volt: training loader, epoch %d, batch %d: %w", t.CurrentEpoch(), batchIdx, err)
	}
	p.TrainBatch.ready()
	t.ckpt.fit.stream.note(t.CurrentEpoch(), batchIdx, b)
	t.run.batchSize = b.Size
	p.At = PointTrainBatchStart
	if err := t.emit(hookOnTrainBatchStart, hookArgs{batch: b, batchIdx: batchIdx}); err != nil {
		return false, err
	}
	if t.run.skipEpoch {
		t.run.skipEpoch = false
		return true, nil
	}
	p.TrainBatch.started()
	out, steps, err := t.perModule.optimization.run(b, batchIdx, lastInEpoch)
	if !t.perModule.optimization.tbptt { // TBPTT agrees after every split (runTBPTT)
		err = t.agreeNonFinite(err)
	}
	if err == nil {
		err = t.broadcastBuffers()
	}
	if err != nil {
		var nf *NonFiniteError
		if errors.As(err, &nf) {
			return false, err
		}
		return false, &StepError{Step: "TrainingStep", Epoch: t.CurrentEpoch(), BatchIdx: batchIdx, Err: t.explainShapeClash(err)}
	}
	stepped := steps > 0
	l.lastStepped = stepped
	stepsBefore := p.OptimizerSteps
	p.OptimizerSteps += int64(steps)
	// Step-interval schedulers count the batches of the epoch, not the
	// optimizer steps: they step on a batch that stepped when its index + 1
	// is a multiple of their frequency (Lightning's _update_learning_rates).
	if stepped {
		if err := t.stepSchedulers(IntervalStep, int64(batchIdx+1), false); err != nil {
			return false, err
		}
	}
	if lastInEpoch {
		l.epochFinished = true
		if err := t.stepSchedulers(IntervalEpoch, int64(t.CurrentEpoch()+1), false); err != nil {
			return false, err
		}
	}
	p.TrainBatch.processed()
	// Whether the cadence puts a validation after this batch is decided
	// before OnTrainBatchEnd (Trainer.ValidatesAfterBatch), so that a
	// step-triggered checkpoint can wait for it. Under data-parallel
	// training an Every(d) cadence is agreed across ranks first.
	if t.ddp.on && l.valEveryTime > 0 {
		if err := t.agree(ctx); err != nil {
			return false, err
		}
	}
	l.valAfterBatch = l.cadenceDue(batchIdx, lastInEpoch, stepped)
	p.At = PointTrainBatchEnd
	// As Lightning's should_update_logs: every LogEveryNSteps optimizer
	// steps, and at every step once a stop is requested (MinEpochs or
	// MinSteps may keep training going; also when the hook asks it).
	stepLogsDue := stepped && (p.OptimizerSteps/t.cfg.logEvery != stepsBefore/t.cfg.logEvery || t.stop.requested)
	t.run.inBatchEnd, t.run.batchEndStepLogs = true, stepLogsDue // a checkpoint taken now records it
	err = t.emit(hookOnTrainBatchEnd, hookArgs{out: out, batch: b, batchIdx: batchIdx})
	validate := l.valAfterBatch
	l.valAfterBatch = false
	if err != nil {
		return false, err
	}
	p.TrainBatch.completed()
	if err := t.agreeAtBatchEnd(ctx); err != nil {
		return false, err
	}
	t.run.inBatchEnd = false
	stepLogsDue = stepLogsDue || stepped && t.stop.requested
	if err := t.logs.endStepLogs(stepLogsDue); err != nil {
		return false, err
	}
	if l.stopValidates(stepped) || validate {
		if err := l.validate(ctx); err != nil {
			return false, err
		}
		if err := t.agreeAtBatchEnd(ctx); err != nil {
			return false, err
		}
	}
	if !stepped {
		return false, nil
	}
	// Plateau schedulers of the step interval see that validation's metrics.
	if err := t.stepSchedulers(IntervalStep, int64(batchIdx+1), true); err != nil {
		return false, err
	}
	if s := t.signalToHonour(); s != nil {
		return false, t.interruptBySignal(s)
	}
	if t.cfg.maxSteps > 0 && p.OptimizerSteps >= t.cfg.maxSteps {
		return true, nil
	}
	return t.stop.requested && t.canStopEarly(), nil
}

// validationDue reports whether validation runs after batch batchIdx of the
// current epoch: a stop requested (stopValidates) or the cadence
// (cadenceDue).
func (l *fitLoop) validationDue(batchIdx int, lastInEpoch, stepped bool) bool {
	return l.stopValidates(stepped) || l.cadenceDue(batchIdx, lastInEpoch, stepped)
}

// stopValidates reports whether a validation runs after the batch because a
// stop was requested and may be honoured: Lightning validates before a
// requested stop ends the epoch ("allow validation if requesting to stop
// early"). The cadence's pending validation is then taken by it.
func (l *fitLoop) stopValidates(stepped bool) bool {
	t := l.t
	if !stepped || !l.validatesInEpoch() || !t.stop.requested || !t.canStopEarly() {
		return false
	}
	l.valDue = false
	return true
}

// cadenceDue reports whether the validation cadence (ValCheckInterval,
// CheckValEveryNEpoch) puts a validation after batch batchIdx of the current
// epoch. A due validation waits for the end of the accumulation window
// (stepped), so it never sees half-accumulated gradients.
func (l *fitLoop) cadenceDue(batchIdx int, lastInEpoch, stepped bool) bool {
	if !l.validatesInEpoch() {
		return false
	}
	t := l.t
	switch {
	case l.acrossEpochs:
		if int(t.progress.TrainBatch.Total.Processed)%l.valEvery == 0 {
			l.valDue = true
		}
	case l.valEveryTime > 0:
		if t.ddp.on && l.agreedValTime || !t.ddp.on && l.clockSaysValidate() {
			l.valDue = true
		}
	case l.valEvery > 0:
		if (batchIdx+1)%l.valEvery == 0 {
			l.valDue = true
		}
	case lastInEpoch:
		l.valDue = true
	}
	if !l.valDue || !stepped && !lastInEpoch {
		return false
	}
	l.valDue = false
	return true
}

// clockSaysValidate reports whether ValCheckInterval Every(d) has passed
// since the last validation (or the start of the fit) on this rank's clock.
// With several ranks the loop validates when any rank's clock says so
// (agreedValTime), so all validate after the same batch.
func (l *fitLoop) clockSaysValidate() bool {
	return l.valEveryTime > 0 && time.Since(l.lastVal) >= l.valEveryTime
}

// validate runs the validation loop inside Fit, asking for the validation
// loaders first when ReloadDataloadersEveryNEpochs says so.
func (l *fitLoop) validate(ctx context.Context) error {
	t := l.t
	if l.reloadValDue() {
		if err := l.loadData(false, true); err != nil {
			return err
		}
		l.valLoadEpoch, l.valLoadCounted = t.CurrentEpoch(), true
		if !l.validating {
			t.state.Stage = RunningTrain
			return nil
		}
	}
	if _, err := t.evalLoop(RunningValidate).run(ctx, l.val, l.valLimits); err != nil {
		return err
	}
	l.lastVal = time.Now()
	t.state.Stage = RunningTrain
	t.run.res, t.run.loader, t.run.numLoaders = t.logs.trainRes, 0, 1
	return nil
}
