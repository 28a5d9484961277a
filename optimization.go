package volt

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/optim"
)

var nan = math.NaN()

// optimization is Lightning's optimization loops, automatic and manual: per
// batch it decides which optimizers run (all, or one chosen by their
// frequencies), in which accumulation mode (gradients are accumulated over
// AccumulateGradBatches batches and applied at the window's boundary), and
// how many optimization steps that makes; steps runs them.
type optimization struct {
	cfg   *resolved // the trainer's: the accumulation in use, TerminateOnNaN
	opts  Optimizers
	cycle int   // sum of frequencies when optimizers alternate, else 0
	all   []int // the indexes of opts, when they all run on every batch
	// manual: the module drives its optimizers (AutomaticOptimizer);
	// tbptt: each batch is split in time (Config.TruncatedBPTTSteps).
	manual, tbptt bool
	out           StepOutput
	// steps runs the compiled training steps (compiledSteps; a fake in loop
	// tests), handing their outputs to take.
	steps trainSteps
	// What take reads a step's outputs with: the logging object, the loop
	// counters (where a failed step was), the loss scaler ("16-mixed") and
	// the store holding the scale.
	logs     *logging
	progress *Progress
	scaler   *optim.LossScaler
	store    *model.Store
}

// optimizersFor returns the module's optimizers, or Adam(1e-3).
func optimizersFor(m Module) (Optimizers, error) {
	oc, ok := m.(OptimizerConfigurer)
	if !ok {
		return Optimize(optim.Adam(1e-3)), nil
	}
	o := oc.ConfigureOptimizers()
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("%T.ConfigureOptimizers: %w", m, err)
	}
	return o, nil
}

func (t *Trainer) newOptimization() (*optimization, error) {
	opts, err := optimizersFor(t.module)
	if err != nil {
		return nil, err
	}
	a := &optimization{cfg: &t.cfg, opts: opts, manual: manualMode(t.module), tbptt: t.cfg.TruncatedBPTTSteps > 0,
		logs: &t.logs, progress: &t.progress, scaler: t.perModule.scaler, store: t.eng.Store}
	if t.cfg.fakeSteps != nil {
		a.steps = t.cfg.fakeSteps
	} else {
		a.steps = newCompiledSteps(t, opts, a.manual, a.take)
	}
	if a.manual && t.cfg.accumulate > 1 {
		return nil, fmt.Errorf("volt: Config.AccumulateGradBatches=%d cannot be used with manual optimization (%T.AutomaticOptimization() is false): accumulate inside TrainingStep", t.cfg.accumulate, t.module)
	}
	if a.tbptt && (a.manual || t.cfg.accumulate > 1 || len(opts) > 1) {
		return nil, fmt.Errorf("volt: Config.TruncatedBPTTSteps works with one optimizer in automatic optimization and AccumulateGradBatches 1")
	}
	if a.manual && t.cfg.GradientClipVal > 0 {
		return nil, fmt.Errorf("volt: Config.GradientClipVal cannot be used with manual optimization (%T.AutomaticOptimization() is false): clip inside TrainingStep with an OnBeforeOptimizerStep hook or volt.ClipGradients", t.module)
	}
	for _, o := range opts {
		if o.Frequency > 0 {
			a.cycle = 0
			for _, o := range opts {
				a.cycle += o.frequency()
			}
			break
		}
	}
	if a.cycle == 0 {
		a.all = make([]int, len(opts))
		for i := range a.all {
			a.all[i] = i
		}
	}
	return a, nil
}

// due returns the optimizers that run on batch batchIdx: all of them, or
// one chosen by the frequencies' cycle.
func (a *optimization) due(batchIdx int) []int {
	if a.cycle == 0 {
		return a.all
	}
	place := batchIdx % a.cycle
	for i, o := range a.opts {
		if place < o.frequency() {
			return []int{i}
		}
		place -= o.frequency()
	}
	return nil
}

// run trains on one batch and returns how many optimization steps it took:
// 1 at an accumulation boundary (however many optimizers ran), 0 inside a
// window; in manual optimization, the number of OptimizerHandle.Step calls;
// with truncated back-propagation, one per time split.
func (a *optimization) run(b *data.Batch, batchIdx int, lastInEpoch bool) (*StepOutput, int, error) {
	if a.manual || a.tbptt {
		opt := manualStep
		if a.tbptt {
			opt = tbpttStep
		}
		loss, steps, err := a.steps.step(opt, engine.ApplyAtOnce, b)
		if err != nil {
			return nil, 0, err
		}
		a.out = StepOutput{loss: loss}
		return &a.out, steps, nil
	}
	k := a.cfg.accumulate
	boundary := (batchIdx+1)%k == 0 || lastInEpoch
	mode := engine.ApplyAtOnce
	if k > 1 {
		mode = engine.AccumulateOnly
		if boundary {
			mode = engine.AccumulateAndApply
		}
		if err := a.steps.setAccumulation(k); err != nil {
			return nil, 0, err
		}
	}
	a.out = StepOutput{}
	for _, opt := range a.due(batchIdx) {
		loss, _, err := a.steps.step(opt, mode, b)
		if err != nil {
			return nil, 0, err
		}
		a.out.loss = loss
	}
	if !boundary {
		return &a.out, 0, nil
	}
	return &a.out, 1, nil
}

// prepare traces the training step(s) the first batch will run, before
// training starts: the variables then exist (for the model summary and the
// callbacks' OnTrainStart) and graph errors surface before any hook of the
// epoch. Mixed precision first creates its master weights, which runs one
// forward pass.
func (a *optimization) prepare(b *data.Batch) error {
	return a.steps.prepare(b, a.firstSteps())
}

// firstSteps returns the steps the first batch runs: none to compile ahead
// with truncated back-propagation (traced per split shape).
func (a *optimization) firstSteps() []programKey {
	switch {
	case a.tbptt:
		return nil
	case a.manual:
		return []programKey{{manualStep, engine.ApplyAtOnce}}
	}
	mode := engine.ApplyAtOnce
	if a.cfg.accumulate > 1 {
		mode = engine.AccumulateOnly
	}
	var first []programKey
	for _, opt := range a.due(0) {
		first = append(first, programKey{opt, mode})
	}
	return first
}
