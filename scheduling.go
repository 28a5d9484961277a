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
	for i := range t.perModule.optimization.opts {
		o := &t.perModule.optimization.opts[i]
		if o.Scheduler == nil {
			continue
		}
		if restored := t.ckpt.schedulers.states; restored != nil {
			states := *restored
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
			if ahead := t.ckpt.schedulers.ahead; ahead == nil || i >= len(ahead) || ahead[i] {
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
	t.ckpt.schedulers = restoredSchedulers{}
	return nil
}

// stepSchedulers steps the schedulers of the given interval that are due,
// those that need a metric (plateau) or the others: Lightning steps them at
// different points (see OptimizerSetup.Interval). count is Lightning's
// index + 1 of the interval: of the batch in its epoch (IntervalStep, only
// on a batch that stepped the optimizer) or of the epoch (IntervalEpoch); a
// scheduler steps when it is a multiple of its SchedulerFrequency.
func (t *Trainer) stepSchedulers(interval Interval, count int64, plateau bool) error {
	for i := range t.perModule.optimization.opts {
		o := &t.perModule.optimization.opts[i]
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
		if b, ok := o.Scheduler.(optim.BoundedScheduler); ok {
			if err := b.CheckStep(); err != nil {
				return fmt.Errorf("volt: optimizer %d's scheduler: %w", i, err)
			}
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

// restoredSchedulers are the scheduler states of a restored checkpoint,
// applied when Fit starts (startSchedulers).
type restoredSchedulers struct {
	// states holds each optimizer's (nil when Fit does not resume).
	states *[][]byte
	// ahead is the checkpoint's "schedulers_ahead".
	ahead []bool
}

// schedulerPart is the state part of the optimizers' learning-rate
// schedulers: each one's state ("schedulers", nil for an optimizer without
// one) and, by optimizer, whether that state holds a step taken after the
// saved learning rate ("schedulers_ahead"; see save). A load keeps them
// until Fit starts the schedulers.
type schedulerPart struct {
	opt      *optimization // the Fit's optimizers (nil before the first Fit)
	restored *restoredSchedulers
	// plateauPending, metrics and epoch tell whether a plateau step
	// follows (withPendingPlateauStep): the Fit is in OnTrainEpochEnd
	// before its plateau schedulers step, with the values they monitor,
	// in epoch epoch.
	plateauPending bool
	metrics        map[string]float64
	epoch          int
}

// schedulerPart returns the schedulers' state part.
func (t *Trainer) schedulerPart() schedulerPart {
	p := schedulerPart{opt: t.perModule.optimization, restored: &t.ckpt.schedulers, metrics: t.logs.callbackMetrics, epoch: t.CurrentEpoch()}
	if fit := t.run.fit; fit != nil {
		p.plateauPending = fit.plateauPending
	}
	return p
}

func (schedulerPart) stateKey() string { return "schedulers" }

func (schedulerPart) members() []string { return []string{"schedulers", "schedulers_ahead"} }

// save adds each optimizer's scheduler state and whether it holds the
// plateau step that follows the checkpoint (a checkpoint taken in
// OnTrainEpochEnd): the learning rate the run goes on with is then the
// scheduler's, not the one saved.
func (p schedulerPart) save(st *stateDoc) error {
	if p.opt == nil {
		return nil
	}
	states := make([][]byte, len(p.opt.opts))
	ahead := make([]bool, len(p.opt.opts))
	for i, o := range p.opt.opts {
		if o.Scheduler == nil {
			continue
		}
		b, err := o.Scheduler.State()
		if err != nil {
			return fmt.Errorf("optimizer %d's scheduler: %w", i, err)
		}
		if p.plateauPending {
			if b, ahead[i], err = p.withPendingPlateauStep(i, b); err != nil {
				return fmt.Errorf("optimizer %d's scheduler: %w", i, err)
			}
		}
		states[i] = b
	}
	if err := st.putNonEmpty("schedulers", states); err != nil {
		return err
	}
	return st.putNonEmpty("schedulers_ahead", ahead)
}

// load keeps the checkpoint's scheduler states for startSchedulers.
func (p schedulerPart) load(st *stateDoc) error {
	var states [][]byte
	var ahead []bool
	if _, err := st.get("schedulers", &states); err != nil {
		return err
	}
	if _, err := st.get("schedulers_ahead", &ahead); err != nil {
		return err
	}
	*p.restored = restoredSchedulers{states: &states, ahead: ahead}
	return nil
}

// withPendingPlateauStep returns the state optimizer i's scheduler will have
// after the plateau step that follows OnTrainEpochEnd, given its state now,
// and whether such a step is due: the state itself when none is. The
// scheduler is left as it was.
func (p schedulerPart) withPendingPlateauStep(i int, state []byte) ([]byte, bool, error) {
	o := &p.opt.opts[i]
	ms, ok := o.Scheduler.(optim.MetricScheduler)
	if !ok || !ms.NeedsMetric() || orDefault(o.Interval, IntervalEpoch) != IntervalEpoch ||
		int64(p.epoch+1)%int64(max(o.SchedulerFrequency, 1)) != 0 {
		return state, false, nil
	}
	metric, ok := p.metrics[o.Monitor]
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
