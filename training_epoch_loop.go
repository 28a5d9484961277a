package volt

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/voltml/volt/data"
)

// runEpoch runs one training epoch, then its validation, then the epoch-end
// hooks and logging.
func (l *fitLoop) runEpoch(ctx context.Context) error {
	t := l.t
	p := &t.progress
	epoch := t.CurrentEpoch()
	// A run restored mid-epoch continues with the next unseen batch, keeping
	// the epoch's counters and metric accumulators.
	skip, valDone := 0, false
	resumed := t.resume != nil && (t.resume.Batch > 0 || t.resume.ValidationDone)
	if resumed {
		skip, valDone = t.resume.Batch, t.resume.ValidationDone
	} else {
		p.Epoch.ready()
		p.TrainBatch.resetCurrent()
		t.trainRes.reset()
	}
	t.resume = nil
	t.state.Stage = RunningTrain
	t.curRes, t.curLoader, t.numLoaders, t.curBatch = t.trainRes, 0, 1, 1
	t.skipEpoch = false
	p.Stage = "train_epoch_start"
	if err := callHook(t, "OnTrainEpochStart", func(h OnTrainEpochStart) error { return h.OnTrainEpochStart(t) }); err != nil {
		return err
	}
	if !resumed {
		p.Epoch.started()
	}

	next, stopBatches := iter.Pull2(l.train.Batches(ctx, epoch, skip))
	defer stopBatches()
	b, err, ok := next()
	for ok {
		if err != nil {
			if ctx.Err() != nil {
				return t.interrupted(ctx)
			}
			return fmt.Errorf("training loader, epoch %d, batch %d: %w", epoch, p.TrainBatch.Current.Ready, err)
		}
		// Look one batch ahead: the last batch of an epoch closes the
		// accumulation window.
		nb, nerr, nok := next()
		stop, err := l.runBatch(b, !nok)
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return t.interrupted(ctx)
		}
		if stop {
			break
		}
		b, err, ok = nb, nerr, nok
	}
	stopBatches()
	p.Epoch.processed()

	if l.validating && (epoch+1)%t.cfg.valEveryEpochs == 0 && !valDone {
		if _, err := t.runEvaluation(ctx, t.valKind(), l.val, -1); err != nil {
			return err
		}
		p.ValRuns++
		t.state.Stage = RunningTrain
		t.curRes, t.curLoader, t.numLoaders = t.trainRes, 0, 1
	}

	// Epoch values are visible to the schedulers and OnTrainEpochEnd, then
	// logged with whatever it logs.
	t.trainRes.epochValues(t.callbackM, nil, t.progBarM)
	if err := t.stepSchedulers(IntervalEpoch, int64(epoch+1)); err != nil {
		return err
	}
	p.Stage = "train_epoch_end"
	if err := callHook(t, "OnTrainEpochEnd", func(h OnTrainEpochEnd) error { return h.OnTrainEpochEnd(t) }); err != nil {
		return err
	}
	if err := t.flushStepLogs(); err != nil {
		return err
	}
	epochLogs := map[string]float64{}
	t.trainRes.epochValues(t.callbackM, epochLogs, t.progBarM)
	if err := t.sendToLoggers(epochLogs); err != nil {
		return err
	}
	p.Epoch.completed()
	t.curRes = nil
	return nil
}

// runBatch runs one training batch with its hooks and reports whether the
// epoch must end after it.
func (l *fitLoop) runBatch(b *data.Batch, lastInEpoch bool) (stop bool, err error) {
	t := l.t
	p := &t.progress
	batchIdx := int(p.TrainBatch.Current.Ready)
	p.TrainBatch.ready()
	t.curBatch = b.Size
	p.Stage = "train_batch_start"
	if err := t.batch.trainStart.call(t, "OnTrainBatchStart", func(h OnTrainBatchStart) error {
		return h.OnTrainBatchStart(t, b, batchIdx)
	}); err != nil {
		return false, err
	}
	if t.skipEpoch {
		t.skipEpoch = false
		return true, nil
	}
	p.TrainBatch.started()
	out, steps, err := t.auto.run(b, batchIdx, lastInEpoch)
	if err != nil {
		var nf *NonFiniteError
		if errors.As(err, &nf) {
			return false, err
		}
		return false, &StepError{Step: "TrainingStep", Epoch: t.CurrentEpoch(), BatchIdx: batchIdx, Err: err}
	}
	stepped := steps > 0
	stepsBefore := p.OptimizerSteps
	for range steps {
		p.OptimizerSteps++
		if err := t.stepSchedulers(IntervalStep, p.OptimizerSteps); err != nil {
			return false, err
		}
	}
	p.TrainBatch.processed()
	p.Stage = "train_batch_end"
	if err := t.batch.trainEnd.call(t, "OnTrainBatchEnd", func(h OnTrainBatchEnd) error {
		return h.OnTrainBatchEnd(t, out, b, batchIdx)
	}); err != nil {
		return false, err
	}
	p.TrainBatch.completed()
	if stepped && p.OptimizerSteps/t.cfg.logEvery != stepsBefore/t.cfg.logEvery {
		if err := t.flushStepLogs(); err != nil {
			return false, err
		}
	} else {
		clear(t.pendingLogs)
	}
	if !stepped {
		return false, nil
	}
	if t.cfg.maxSteps > 0 && p.OptimizerSteps >= t.cfg.maxSteps {
		return true, nil
	}
	return t.shouldStop && t.canStopEarly(), nil
}
