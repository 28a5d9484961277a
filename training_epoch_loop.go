package volt

import (
	"context"
	"errors"
	"fmt"
	"iter"
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
	skip, valDone := 0, false
	resumed := t.ckpt.resume != nil && t.ckpt.resume.inEpoch()
	if resumed {
		skip, valDone = t.ckpt.resume.Batch, t.ckpt.resume.ValidationDone
	} else {
		if n := t.cfg.ReloadDataloadersEveryNEpochs; n > 0 && epoch > 0 && epoch%n == 0 {
			if err := l.loadData(); err != nil {
				return err
			}
		}
		p.Epoch.ready()
		p.TrainBatch.resetCurrent()
		t.logs.trainRes.reset()
	}
	t.ckpt.resume = nil
	l.epochFinished = false
	t.state.Stage = RunningTrain
	t.run.res, t.run.loader, t.run.numLoaders, t.run.batchSize = t.logs.trainRes, 0, 1, 1
	t.run.skipEpoch = false
	p.At = PointTrainEpochStart
	if err := t.emit(hookOnTrainEpochStart, hookArgs{}); err != nil {
		return err
	}
	if !resumed {
		p.Epoch.started()
	}
	// A checkpoint taken after a batch, before the validation it scheduled,
	// runs that validation first.
	if resumed && !valDone && skip > 0 && l.validationDue(skip-1, skip == effectiveBatches(l.train.NumBatches(), l.trainLimit), true) {
		if err := l.validate(ctx); err != nil {
			return err
		}
	}
	if err := l.runBatches(ctx, epoch, skip); err != nil {
		return err
	}
	p.Epoch.processed()

	// Epoch values are visible to OnTrainEpochEnd and the plateau
	// schedulers, then logged with whatever it logs.
	if err := t.syncResults(t.logs.trainRes); err != nil {
		return err
	}
	if err := t.logs.trainRes.computeMetrics(t.logs.trainMetrics); err != nil {
		return err
	}
	t.logs.trainRes.epochValues(t.logs.callbackM, nil, t.logs.progBarM)
	p.At = PointTrainEpochEnd
	// A checkpoint taken in OnTrainEpochEnd holds the plateau step that
	// follows it (schedulerSnapshot), so that a run resumed from it goes on
	// with the same learning rate.
	l.plateauPending = l.epochFinished
	if err := t.emit(hookOnTrainEpochEnd, hookArgs{}); err != nil {
		return err
	}
	l.plateauPending = false
	if l.epochFinished {
		if err := t.stepSchedulers(IntervalEpoch, int64(epoch+1), true); err != nil {
			return err
		}
	}
	if err := t.flushStepLogs(); err != nil {
		return err
	}
	epochLogs := map[string]float64{}
	t.logs.trainRes.epochValues(t.logs.callbackM, epochLogs, t.logs.progBarM)
	if err := t.sendToLoggers(epochLogs); err != nil {
		return err
	}
	if err := l.ckpt.save(t); err != nil {
		return err
	}
	p.Epoch.completed()
	t.run.res = nil
	return nil
}

// runBatches runs the epoch's batches from skip on, looking one batch ahead
// so that the last batch is known (it closes the accumulation window and
// triggers the end-of-epoch validation).
func (l *fitLoop) runBatches(ctx context.Context, epoch, skip int) error {
	t := l.t
	p := &t.progress
	if l.trainLimit == 0 {
		return nil
	}
	var next func() (*data.Batch, error, bool)
	var b *data.Batch
	var err error
	ok := true
	if f := l.first; f != nil && f.epoch == epoch && f.skip == skip {
		// The iteration prepare opened: its first batch is this one.
		l.first = nil
		next, b, err = f.next, f.batch, f.err
		defer f.stop()
	} else {
		l.closeFirst()
		var stop func()
		next, stop = iter.Pull2(t.profiledBatches(actTrainNext, l.train.Batches(ctx, epoch, skip)))
		defer stop()
		b, err, ok = next()
	}
	for idx := skip; ok; idx++ {
		if err != nil {
			if ctx.Err() != nil {
				return t.interrupted(ctx)
			}
			return fmt.Errorf("training loader, epoch %d, batch %d: %w", epoch, p.TrainBatch.Current.Ready, err)
		}
		var nb *data.Batch
		var nerr error
		last := l.trainLimit > 0 && idx+1 >= l.trainLimit
		if !last {
			nb, nerr, ok = next()
			last = !ok
		}
		// err, not a new variable: the look-ahead's error below must reach
		// the check at the top of the next iteration.
		var end bool
		if end, err = l.runBatch(ctx, b, last); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return t.interrupted(ctx)
		}
		if end || last {
			return nil
		}
		b, err = nb, nerr
	}
	return nil
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
	t.run.parts = b.Parts
	out, steps, err := t.auto.run(b, batchIdx, lastInEpoch)
	err = t.agreeNonFinite(err)
	if err != nil {
		var nf *NonFiniteError
		if errors.As(err, &nf) {
			return false, err
		}
		return false, &StepError{Step: "TrainingStep", Epoch: t.CurrentEpoch(), BatchIdx: batchIdx, Err: t.explainShapeClash(err)}
	}
	stepped := steps > 0
	stepsBefore := p.OptimizerSteps
	for range steps {
		p.OptimizerSteps++
		if err := t.stepSchedulers(IntervalStep, p.OptimizerSteps, false); err != nil {
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
	p.At = PointTrainBatchEnd
	if err := t.emit(hookOnTrainBatchEnd, hookArgs{out: out, batch: b, batchIdx: batchIdx}); err != nil {
		return false, err
	}
	p.TrainBatch.completed()
	if err := t.agreeAtBatchEnd(ctx); err != nil {
		return false, err
	}
	if stepped && p.OptimizerSteps/t.cfg.logEvery != stepsBefore/t.cfg.logEvery {
		if err := t.flushStepLogs(); err != nil {
			return false, err
		}
	} else {
		t.skipStepLogs()
	}
	if l.validationDue(batchIdx, lastInEpoch, stepped) {
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
	for s := stepsBefore + 1; s <= p.OptimizerSteps; s++ {
		if err := t.stepSchedulers(IntervalStep, s, true); err != nil {
			return false, err
		}
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
// current epoch. A due validation waits for the end of the accumulation
// window (stepped), so it never sees half-accumulated gradients.
func (l *fitLoop) validationDue(batchIdx int, lastInEpoch, stepped bool) bool {
	t := l.t
	if !l.validating {
		return false
	}
	epoch := t.CurrentEpoch()
	if !l.acrossEpochs && (epoch+1)%t.cfg.valEveryEpochs != 0 {
		return false
	}
	if stepped && t.stop.requested && t.canStopEarly() {
		// Lightning validates before a requested stop ends the epoch
		// ("allow validation if requesting to stop early").
		l.valDue = false
		return true
	}
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

// validate runs the validation loop inside Fit.
func (l *fitLoop) validate(ctx context.Context) error {
	t := l.t
	if _, err := t.runEvaluation(ctx, t.valKind(), l.val, l.valLimits); err != nil {
		return err
	}
	t.progress.ValRuns++
	l.lastVal = time.Now()
	t.state.Stage = RunningTrain
	t.run.res, t.run.loader, t.run.numLoaders = t.logs.trainRes, 0, 1
	return nil
}
