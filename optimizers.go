package volt

import (
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/optim"
)

// OptimizerSetup is one optimizer as ConfigureOptimizers returns it: the
// algorithm, the variables it updates, how often it runs and its learning
// rate schedule.
type OptimizerSetup struct {
	// Optimizer is the algorithm and its hyperparameters.
	Optimizer *optim.Optimizer
	// Params selects the variables this optimizer updates, by scope path
	// ("/generator") or PyTorch name ("backbone", "layer4.*"; see Selects);
	// empty means every trainable variable. A selector that selects no
	// variable of the module is an error when the step is traced.
	Params []string
	// Frequency is the number of consecutive batches this optimizer runs
	// before the next one takes over, with several optimizers; 0 means 1.
	Frequency int

	// Scheduler sets the learning rate on the host; volt writes it into the
	// optimizer's learning-rate variable, so the step is never recompiled.
	Scheduler optim.Scheduler
	// Interval says when the scheduler steps, as in Lightning: IntervalEpoch
	// (default) steps with the epoch's last training batch, before
	// OnTrainBatchEnd and that epoch's validation, and a scheduler that needs
	// a metric (ReduceLROnPlateau) after OnTrainEpochEnd; an epoch ended early
	// (a stop, SkipRestOfEpoch) does not step them. IntervalStep steps after
	// each batch that steps the optimizer (once per batch, however many
	// optimizer steps it takes), before OnTrainBatchEnd, and one that needs
	// a metric after the validation that batch may run.
	Interval Interval
	// SchedulerFrequency steps the scheduler every n intervals; 0 means 1.
	// As in Lightning, IntervalStep counts the batches of each epoch, not
	// the optimizer steps: the scheduler steps after a batch that steps the
	// optimizer when the batch's index in the epoch + 1 is a multiple of n
	// (4 batches per epoch, n 3: after global steps 3, 7, 11; with
	// AccumulateGradBatches 2 and n 2: after every step). IntervalEpoch steps
	// after every n-th epoch (epoch index + 1 a multiple of n).
	SchedulerFrequency int
	// Monitor names the metric a ReduceLROnPlateau scheduler watches.
	Monitor string

	// Groups give some of the optimizer's variables their own learning rate:
	// the optimizer's (scheduled) rate times the group's LRScale, held in a
	// variable so that it can change between steps (Trainer.SetLRScale),
	// and their own weight decay (ParamGroup.WeightDecay, NoWeightDecay).
	Groups []ParamGroup
}

// Interval is the unit in which a learning-rate scheduler steps.
type Interval string

// The scheduler intervals.
const (
	IntervalEpoch Interval = "epoch"
	IntervalStep  Interval = "step"
)

// Optimizers is what ConfigureOptimizers returns: one or more optimizers.
// With several, the training step is traced once per optimizer
// (Step.OptimizerIdx says which) and only that optimizer's variables receive
// gradients and updates, as in Lightning 1.x.
type Optimizers []OptimizerSetup

// Optimize returns a single-optimizer configuration over all variables.
func Optimize(o *optim.Optimizer) Optimizers { return Optimizers{{Optimizer: o}} }

// owns reports whether the optimizer updates variable v.
func (s *OptimizerSetup) owns(v *model.Variable) bool {
	return len(s.Params) == 0 || selectsAny(s.Params, v.Path())
}

// validate checks every setup, naming the optimizer index and field.
func (o Optimizers) validate() error {
	if len(o) == 0 {
		return fmt.Errorf("returned no optimizers")
	}
	for i, s := range o {
		if err := s.Optimizer.Validate(); err != nil {
			return fmt.Errorf("optimizer %d: %w", i, err)
		}
		if s.Frequency < 0 {
			return fmt.Errorf("optimizer %d: Frequency must be >= 0 (0 means 1), got %d", i, s.Frequency)
		}
		switch s.Interval {
		case "", IntervalEpoch, IntervalStep:
		default:
			return fmt.Errorf("optimizer %d: Interval %q; valid: %q, %q", i, s.Interval, IntervalEpoch, IntervalStep)
		}
		if s.SchedulerFrequency < 0 {
			return fmt.Errorf("optimizer %d: SchedulerFrequency must be >= 0 (0 means 1), got %d", i, s.SchedulerFrequency)
		}
		if v, ok := s.Scheduler.(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				return fmt.Errorf("optimizer %d: Scheduler: %w", i, err)
			}
		}
		if ms, ok := s.Scheduler.(optim.MetricScheduler); ok && ms.NeedsMetric() && s.Monitor == "" {
			return fmt.Errorf("optimizer %d: its scheduler needs a metric: set Monitor to the name of a logged metric", i)
		}
		o[i].Groups = slices.Clone(s.Groups) // LR becomes LRScale in the copy
		if err := validateGroups(o[i].Groups, s.Optimizer.LR); err != nil {
			return fmt.Errorf("optimizer %d: %w", i, err)
		}
		for j, p := range s.Params {
			if err := CheckSelector(p); err != nil {
				return fmt.Errorf("optimizer %d: Params[%d]: %w", i, j, err)
			}
		}
	}
	return nil
}

// frequency returns the number of consecutive batches optimizer i runs.
func (s *OptimizerSetup) frequency() int { return max(s.Frequency, 1) }
