package volt

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/voltml/volt/optim"
)

// startSchedulers gives each scheduler its base learning rate at the start of
// a fresh Fit, or restores the states a checkpoint saved. In a trainer
// whose first trace is still to come (fresh), a state the checkpoint lacks
// is reported by that trace, after its check of the variables (checkLoaded):
// a checkpoint of another model lacks both, and its variables say so best.
func (t *Trainer) startSchedulers(fresh bool) error {
	for i := range t.optimization.opts {
		o := &t.optimization.opts[i]
		if o.Scheduler == nil {
			continue
		}
		if t.ckpt.restoredSchedulers != nil {
			states := *t.ckpt.restoredSchedulers
			if i >= len(states) || states[i] == nil {
				err := fmt.Errorf("volt: the checkpoint has no state for optimizer %d's scheduler", i)
				if l := t.ckpt.loaded; l != nil {
					err = fmt.Errorf("volt: checkpoint %s has no state for optimizer %d's scheduler (saved by a run whose ConfigureOptimizers had none)", l.path, i)
					if fresh && l.strict {
						l.schedulerErr = err
						continue
					}
				}
				return err
			}
			if err := o.Scheduler.LoadState(states[i]); err != nil {
				return fmt.Errorf("volt: restoring optimizer %d's scheduler: %w", i, err)
			}
			// The checkpoint's learning rate is the run's (a callback,
			// StochasticWeightAveraging, may have set it since the
			// scheduler's last step), unless the state holds a step taken
			// after it was saved (the plateau step at an epoch's end), or
			// the checkpoint does not say (one from before it did).
			if ahead := t.ckpt.restoredSchedulersAhead; ahead == nil || i >= len(ahead) || ahead[i] {
				if err := t.setLR(i, o.Scheduler.LR()); err != nil {
					return err
				}
			}
			continue
		}
		if err := t.setLR(i, o.Scheduler.Start(o.Optimizer.LR)); err != nil {
			return err
		}
	}
	t.ckpt.restoredSchedulers, t.ckpt.restoredSchedulersAhead = nil, nil
	return nil
}

// stepSchedulers steps the schedulers of the given interval that are due,
// those that need a metric (plateau) or the others: Lightning steps them at
// different points (see OptimizerSetup.Interval). count is Lightning's
// index + 1 of the interval: of the batch in its epoch (IntervalStep, only
// on a batch that stepped the optimizer) or of the epoch (IntervalEpoch); a
// scheduler steps when it is a multiple of its SchedulerFrequency.
func (t *Trainer) stepSchedulers(interval Interval, count int64, plateau bool) error {
	for i := range t.optimization.opts {
		o := &t.optimization.opts[i]
		if o.Scheduler == nil || orDefault(o.Interval, IntervalEpoch) != interval {
			continue
		}
		ms, ok := o.Scheduler.(optim.MetricScheduler)
		needsMetric := ok && ms.NeedsMetric()
		if needsMetric != plateau || count%int64(max(o.SchedulerFrequency, 1)) != 0 {
			continue
		}
		metric := math.NaN()
		if needsMetric {
			v, ok := t.logs.callbackMetrics[o.Monitor]
			if !ok {
				return fmt.Errorf("volt: optimizer %d's scheduler monitors %q, which was not logged; logged metrics: %s",
					i, o.Monitor, strings.Join(slices.Sorted(maps.Keys(t.logs.callbackMetrics)), ", "))
			}
			metric = v
		}
		if err := t.setLR(i, o.Scheduler.Step(metric)); err != nil {
			return err
		}
	}
	return nil
}

// setLR writes lr into optimizer i's learning-rate variable.
func (t *Trainer) setLR(i int, lr float64) error {
	if err := t.eng.SetLearningRate(i, lr); err != nil {
		return fmt.Errorf("volt: learning rate of optimizer %d: %w", i, err)
	}
	return nil
}

// schedulerSnapshot returns each optimizer's scheduler state (nil without
// one), and by optimizer whether that state holds the plateau step that
// follows the checkpoint (a checkpoint taken in OnTrainEpochEnd): the
// learning rate the run goes on with is then the scheduler's, not the one
// saved.
func (t *Trainer) schedulerSnapshot() ([][]byte, []bool, error) {
	if t.optimization == nil {
		return nil, nil, nil
	}
	states := make([][]byte, len(t.optimization.opts))
	ahead := make([]bool, len(t.optimization.opts))
	for i, o := range t.optimization.opts {
		if o.Scheduler == nil {
			continue
		}
		b, err := o.Scheduler.State()
		if err != nil {
			return nil, nil, fmt.Errorf("optimizer %d's scheduler: %w", i, err)
		}
		if fit := t.run.fit; fit != nil && fit.plateauPending {
			if b, ahead[i], err = t.withPendingPlateauStep(i, b); err != nil {
				return nil, nil, fmt.Errorf("optimizer %d's scheduler: %w", i, err)
			}
		}
		states[i] = b
	}
	return states, ahead, nil
}

// withPendingPlateauStep returns the state optimizer i's scheduler will have
// after the plateau step that follows OnTrainEpochEnd, given its state now,
// and whether such a step is due: the state itself when none is. The
// scheduler is left as it was.
func (t *Trainer) withPendingPlateauStep(i int, state []byte) ([]byte, bool, error) {
	o := &t.optimization.opts[i]
	ms, ok := o.Scheduler.(optim.MetricScheduler)
	if !ok || !ms.NeedsMetric() || orDefault(o.Interval, IntervalEpoch) != IntervalEpoch ||
		int64(t.CurrentEpoch()+1)%int64(max(o.SchedulerFrequency, 1)) != 0 {
		return state, false, nil
	}
	metric, ok := t.logs.callbackMetrics[o.Monitor]
	if !ok {
		return state, false, nil // the step will fail, saying so
	}
	if p, ok := o.Scheduler.(optim.StepPeeker); ok {
		stepped, err := p.StateAfterStep(metric)
		return stepped, true, err
	}
	o.Scheduler.Step(metric)
	stepped, err := o.Scheduler.State()
	if rerr := o.Scheduler.LoadState(state); rerr != nil {
		return nil, false, rerr
	}
	return stepped, true, err
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
