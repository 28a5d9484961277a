package volt

import (
	"context"
	"fmt"

	"github.com/voltml/volt/data"
)

// batchLoop is what the evaluation and prediction loops share for one
// loader: its name in errors, its step's name, its progress counters and
// its batch hooks.
type batchLoop struct {
	what, stepName       string
	progress             *Tracker
	batchStart, batchEnd hookID
	// afterBatch, when set, runs after each batch's end hooks (the
	// evaluation loops send their step values to the loggers there).
	afterBatch func() error
}

// evalBatches runs the batches of loader dl (at most limit when limit >= 0):
// the progress counters, the batch hooks around step (which runs the
// compiled step and returns what the batch-end hooks see), and the
// interruption checks.
func (t *Trainer) evalBatches(ctx context.Context, l batchLoop, loader data.Loader, dl, limit int, step func(b *data.Batch) (*StepOutput, error)) error {
	batchIdx := 0
	var dts batchDTypes
	for b, err := range t.profiledBatches(l.nextAction(), loader.Batches(ctx, 0, 0)) {
		if limit >= 0 && batchIdx >= limit {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return t.interrupted(ctx)
			}
			return fmt.Errorf("%s loader %d, batch %d: %w", l.what, dl, batchIdx, err)
		}
		if err := dts.check(b, batchIdx); err != nil {
			return fmt.Errorf("volt: %s loader %d, batch %d: %w", l.what, dl, batchIdx, err)
		}
		t.run.batchSize = b.Size
		l.progress.ready()
		if err := t.emit(l.batchStart, hookArgs{batch: b, batchIdx: batchIdx, dataloaderIdx: dl}); err != nil {
			return err
		}
		l.progress.started()
		stopStep := t.profile(l.stepAction())
		out, err := step(b)
		stopStep()
		if err != nil {
			return &StepError{Step: l.stepName, Epoch: t.CurrentEpoch(), BatchIdx: batchIdx, Err: t.explainShapeClash(err)}
		}
		l.progress.processed()
		if err := t.emit(l.batchEnd, hookArgs{out: out, batch: b, batchIdx: batchIdx, dataloaderIdx: dl}); err != nil {
			return err
		}
		l.progress.completed()
		if l.afterBatch != nil {
			if err := l.afterBatch(); err != nil {
				return err
			}
		}
		batchIdx++
		if ctx.Err() != nil {
			return t.interrupted(ctx)
		}
	}
	return nil
}
