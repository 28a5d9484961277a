package volt

import (
	"fmt"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
)

// The optimizer indexes of the steps the module drives itself.
const (
	manualStep = -1 // the manual-optimization step
	tbpttStep  = -2 // the truncated back-propagation through time step
)

// trainSteps is the seam between the loops and the engine: the compiled
// training steps. optimization decides which optimizers run on a batch, in
// which accumulation mode, and how many optimization steps that makes;
// trainSteps runs them and calls nothing of optimization back.
// compiledSteps is the GoMLX implementation; loop tests use a fake, so the
// loops' decisions are tested without tracing or compiling a graph.
type trainSteps interface {
	// prepare builds the steps in first (the ones the first batch runs) for
	// b, before training starts, so the variables exist (and trace-time
	// hooks have run).
	prepare(b *data.Batch, first []programKey) error
	// setAccumulation makes the steps divide the loss by k.
	setAccumulation(k int) error
	// step runs optimizer opt's step (manualStep: the module's manual step;
	// tbpttStep: the truncated back-propagation step) in mode on b and
	// returns the loss and, for the steps the module drives, how many
	// optimization steps it took.
	step(opt int, mode engine.Accumulation, b *data.Batch) (loss *tensors.Tensor, moduleSteps int, err error)
}

// compiledSteps runs the training steps as compiled GoMLX programs. It owns
// the programs (compiled on first use, per optimizer and accumulation mode),
// the mixed-precision master weights and the accumulation factor written in
// the store. It hands the raw outputs of each program it runs to take (the
// optimization's: optimization.take), which reads them.
type compiledSteps struct {
	t      *Trainer
	take   func(out *trainOutputs, batchSize int) error
	opts   Optimizers // the decision side's, shared: a new group is seen here
	manual bool
	// parts are the parts of the batch being traced (combined loaders).
	parts    []data.Part
	programs map[programKey]*trainProgram
	tbptt    *tbptt // truncated back-propagation through time, once it ran
	// mastersReady: the float32 master weights exist, or the precision
	// needs none (not mixed).
	mastersReady bool
	// reduce, when set, splits the training steps in two programs with it
	// between them (engine.Reducer): the data-parallel all-reduce.
	reduce *engine.Reducer
	// factor is the accumulation factor last written, in the tensor factorSet.
	factor    int
	factorSet *tensors.Tensor
	out       trainOutputs // the last run's (run)
}

func newCompiledSteps(t *Trainer, opts Optimizers, manual bool, take func(*trainOutputs, int) error) *compiledSteps {
	return &compiledSteps{t: t, take: take, opts: opts, manual: manual, programs: map[programKey]*trainProgram{},
		mastersReady: !t.cfg.precision.Mixed(), reduce: t.cfg.reduceGradients}
}

func (c *compiledSteps) prepare(b *data.Batch, first []programKey) error {
	c.parts = b.Parts
	if err := c.ensureMasters(b); err != nil {
		return err
	}
	if err := c.compile(b, first); err != nil {
		return err
	}
	return c.t.eng.InitializeVariables()
}

func (c *compiledSteps) step(opt int, mode engine.Accumulation, b *data.Batch) (*tensors.Tensor, int, error) {
	c.parts = b.Parts
	switch opt {
	case tbpttStep:
		return c.runTBPTT(b)
	case manualStep:
	default:
		if !c.mastersReady {
			if err := c.ensureMasters(b); err != nil {
				return nil, 0, err
			}
		}
	}
	tp, err := c.program(opt, mode)
	if err != nil {
		return nil, 0, err
	}
	out, err := c.run(tp, b)
	if err != nil {
		return nil, 0, err
	}
	if err := c.take(out, b.Size); err != nil {
		return nil, 0, err
	}
	return out.loss, out.info.manualSteps, nil
}

// syncBatchNorm reports whether the automatic training steps synchronise
// batch normalization (Config.SyncBatchNorm under data-parallel training;
// one process has nothing to synchronise).
func (c *compiledSteps) syncBatchNorm() bool { return c.t.cfg.SyncBatchNorm && c.reduce != nil }

// retrace drops the compiled programs: the next batch traces them again.
func (c *compiledSteps) retrace() {
	c.programs = map[programKey]*trainProgram{}
	c.tbptt = nil
}

// compile compiles the programs first names for b's shapes.
func (c *compiledSteps) compile(b *data.Batch, first []programKey) error {
	defer c.t.profile(actCompileTraining)()
	for _, k := range first {
		tp, err := c.program(k.opt, k.mode)
		if err != nil {
			return err
		}
		if err := tp.compile(b); err != nil {
			return err
		}
	}
	return nil
}

// setAccumulation makes the compiled steps divide the loss by k, writing
// the factor's variable when it holds another value (a change by
// SetAccumulateGradBatches, or a restored checkpoint).
func (c *compiledSteps) setAccumulation(k int) error {
	store := c.t.eng.Store
	if v := store.GetVariable(engine.AccumulationFactorPath); v != nil && c.factorSet != nil {
		if cur, err := v.Value(); err == nil && cur == c.factorSet && c.factor == k {
			return nil
		}
	}
	if err := engine.SetAccumulationFactor(store, k); err != nil {
		return fmt.Errorf("accumulation factor: %w", err)
	}
	v := store.GetVariable(engine.AccumulationFactorPath)
	cur, err := v.Value()
	if err != nil {
		return err
	}
	c.factor, c.factorSet = k, cur
	return nil
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
