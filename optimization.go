package volt

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/optim"
)

var nan = math.NaN()

// automaticOptimization is Lightning's automatic optimization: per batch, the
// optimizers due run their compiled step; gradients are accumulated over
// AccumulateGradBatches batches and applied at the window's boundary.
type automaticOptimization struct {
	t        *Trainer
	opts     Optimizers
	programs map[programKey]*trainProgram
	cycle    int // sum of frequencies when optimizers alternate, else 0
	manual   bool
	// mastersReady is set once the float32 master weights exist (mixed precision).
	mastersReady bool
	tbptt        *tbptt // truncated back-propagation through time, when configured
	out          StepOutput
	// steps runs the compiled training steps (compiledSteps; a fake in loop
	// tests).
	steps trainSteps
	// reduce, when set, splits the training steps in two programs with it
	// between them (engine.Reducer): the data-parallel all-reduce.
	reduce *engine.Reducer
	// factor is the accumulation factor last written, in the tensor factorSet.
	factor    int
	factorSet *tensors.Tensor
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

func (t *Trainer) newAutomaticOptimization() (*automaticOptimization, error) {
	opts, err := optimizersFor(t.module)
	if err != nil {
		return nil, err
	}
	a := &automaticOptimization{t: t, opts: opts, programs: map[programKey]*trainProgram{}, manual: manualMode(t.module),
		reduce: t.cfg.reduceGradients}
	a.steps = compiledSteps{a}
	if t.cfg.fakeSteps != nil {
		a.steps = t.cfg.fakeSteps
	}
	if a.manual && t.cfg.accumulate > 1 {
		return nil, fmt.Errorf("volt: Config.AccumulateGradBatches=%d cannot be used with manual optimization (%T.AutomaticOptimization() is false): accumulate inside TrainingStep", t.cfg.accumulate, t.module)
	}
	if t.cfg.TruncatedBPTTSteps > 0 && (a.manual || t.cfg.accumulate > 1 || len(opts) > 1) {
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
	return a, nil
}

// due returns the optimizers that run on batch batchIdx: all of them, or
// one chosen by the frequencies' cycle.
func (a *automaticOptimization) due(batchIdx int) []int {
	if a.cycle == 0 {
		idx := make([]int, len(a.opts))
		for i := range idx {
			idx[i] = i
		}
		return idx
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
// window; in manual optimization, the number of OptimizerHandle.Step calls.
func (a *automaticOptimization) run(b *data.Batch, batchIdx int, lastInEpoch bool) (*StepOutput, int, error) {
	if a.manual {
		loss, steps, err := a.steps.step(manualStep, engine.ApplyAtOnce, b)
		if err != nil {
			return nil, 0, err
		}
		a.out = StepOutput{loss: loss}
		return &a.out, steps, nil
	}
	if a.t.cfg.TruncatedBPTTSteps > 0 {
		return a.runTBPTT(b)
	}
	k := a.t.cfg.accumulate
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
func (a *automaticOptimization) prepare(b *data.Batch) error {
	a.t.run.parts = b.Parts
	return a.steps.prepare(b)
}
