package tuner

import (
	"fmt"
	"math"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// lrRecorder is the sweep's callback (Lightning's _LRCallback): the learning
// rate before each optimization step, the smoothed loss after it, and the stop
// when the loss diverges.
type lrRecorder struct {
	threshold float64 // 0: no early stop
	sweep     *sweepSchedule
	lrs       []float64
	losses    []float64
	avg, best float64
	stopped   bool
}

// boundary reports whether batch batchIdx ends an accumulation window.
func boundary(t *volt.Trainer, batchIdx int) bool {
	return (batchIdx+1)%max(t.AccumulateGradBatches(), 1) == 0
}

// OnTrainBatchStart records the learning rate the step will use, as the
// schedule computed it (float64; the optimizer's variable holds it in the
// trainer's precision).
func (r *lrRecorder) OnTrainBatchStart(t *volt.Trainer, _ *data.Batch, batchIdx int) error {
	if !boundary(t, batchIdx) {
		return nil
	}
	lrs := t.LearningRates()
	if len(lrs) != 1 {
		return fmt.Errorf("tuner.LRFind: the module has %d optimizers; the learning-rate finder works with one", len(lrs))
	}
	r.lrs = append(r.lrs, r.sweep.LR())
	return nil
}

// OnTrainBatchEnd smooths the step's loss and stops the sweep when it
// diverges. The bias correction uses the global step after the step, as
// Lightning does.
func (r *lrRecorder) OnTrainBatchEnd(t *volt.Trainer, out *volt.StepOutput, _ *data.Batch, batchIdx int) error {
	if !boundary(t, batchIdx) {
		return nil
	}
	loss := out.Loss()
	if math.IsNaN(loss) && out.LossTensor() == nil {
		r.losses = append(r.losses, math.NaN())
		return nil
	}
	// Lightning records the loss its closure returns, divided by the
	// accumulation factor; the suggestion and the early stop do not depend on
	// that scale, the curve's values do.
	loss /= float64(max(t.AccumulateGradBatches(), 1))
	step := t.GlobalStep()
	r.avg = beta*r.avg + (1-beta)*loss
	smoothed := r.avg / (1 - pow(beta, float64(step+1)))
	if r.threshold > 0 && step > 1 && smoothed > r.threshold*r.best {
		r.stopped = true
		t.Stop(fmt.Sprintf("tuner.LRFind: the smoothed loss %g exceeds %g × the best %g", smoothed, r.threshold, r.best))
	}
	if smoothed < r.best || step == 1 {
		r.best = smoothed
	}
	r.losses = append(r.losses, smoothed)
	return nil
}
