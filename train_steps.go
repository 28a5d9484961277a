package volt

import (
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
)

// manualStep is the optimizer index of the manual-optimization step.
const manualStep = -1

// trainSteps is what automatic optimization needs from the engine: the
// compiled training steps. automaticOptimization decides which optimizers
// run on a batch, in which accumulation mode, and how many optimization
// steps that makes; trainSteps runs them. compiledSteps is the GoMLX
// implementation; loop tests use a fake, so the loops' decisions are tested
// without tracing or compiling a graph.
type trainSteps interface {
	// prepare builds the programs the first batch runs, before training
	// starts, so the variables exist (and trace-time hooks have run).
	prepare(b *data.Batch) error
	// setAccumulation makes the steps divide the loss by k.
	setAccumulation(k int) error
	// step runs optimizer opt's step (manualStep: the module's manual step)
	// in mode on b and returns the loss and, for the manual step, how many
	// optimization steps the module took.
	step(opt int, mode engine.Accumulation, b *data.Batch) (loss *tensors.Tensor, manualSteps int, err error)
}

// compiledSteps runs automatic optimization's steps as compiled GoMLX
// programs.
type compiledSteps struct{ a *automaticOptimization }

func (c compiledSteps) prepare(b *data.Batch) error {
	if err := c.a.ensureMasters(b); err != nil {
		return err
	}
	if err := c.a.compileFirst(b); err != nil {
		return err
	}
	return c.a.t.eng.InitializeVariables()
}

func (c compiledSteps) setAccumulation(k int) error { return c.a.setAccumulationFactor(k) }

func (c compiledSteps) step(opt int, mode engine.Accumulation, b *data.Batch) (*tensors.Tensor, int, error) {
	if opt != manualStep {
		if err := c.a.ensureMasters(b); err != nil {
			return nil, 0, err
		}
	}
	tp, err := c.a.program(opt, mode)
	if err != nil {
		return nil, 0, err
	}
	loss, info, err := c.a.t.runTrainProgram(tp, b)
	if err != nil {
		return nil, 0, err
	}
	return loss, info.manualSteps, nil
}

// evalSteps is what the evaluation and prediction loops need from the
// engine: run a batch's compiled step. compiledEvalSteps is the GoMLX
// implementation; loop tests use a fake.
type evalSteps interface {
	// evaluate runs the validation or test step of loader dl of n on b,
	// records its logged values in res and returns what the batch-end hooks
	// see.
	evaluate(kind evalKind, res *results, dl, n int, b *data.Batch) (*StepOutput, error)
	// predict runs the predict step of loader dl on b and returns what the
	// batch-end hooks see, with the prediction.
	predict(ps PredictStepper, dl int, b *data.Batch) (*StepOutput, error)
}

// compiledEvalSteps runs the evaluation and prediction steps as compiled
// GoMLX programs (evalProgramFor, predictProgram).
type compiledEvalSteps struct{ t *Trainer }

// evalSteps returns the evaluation steps: compiled, or the configured fake.
func (t *Trainer) evalSteps() evalSteps {
	if t.cfg.fakeEval != nil {
		return t.cfg.fakeEval
	}
	return compiledEvalSteps{t}
}
