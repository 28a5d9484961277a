package volt

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
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
	reduce engine.Reducer
	// factor is the accumulation factor last written, in the tensor factorSet.
	factor    int
	factorSet *tensors.Tensor
}

type programKey struct {
	opt  int
	mode engine.Accumulation
}

// trainProgram is one compiled training step and what its outputs mean.
type trainProgram struct {
	step   *engine.TrainStep // automatic optimization: volt builds the update
	manual *engine.Program   // manual optimization: the module steps its optimizers
	infos  map[graph.GraphId]*traceInfo
	traced *traceInfo // filled while tracing, bound to its graph at first run
	// tracing is the Step of the graph being traced, for the update's hooks.
	tracing *Step
}

// run executes the step on b: its outputs, the id of the graph that ran and
// what the update's outputs mean.
func (tp *trainProgram) run(b *data.Batch) ([]*tensors.Tensor, graph.GraphId, engine.UpdateTrace, error) {
	if tp.manual != nil {
		outs, gid, err := tp.manual.Run(b)
		return outs, gid, engine.UpdateTrace{}, err
	}
	return tp.step.Run(b)
}

// compile traces and compiles the step for b's shapes.
func (tp *trainProgram) compile(b *data.Batch) error {
	if tp.manual != nil {
		return tp.manual.Compile(b)
	}
	return tp.step.Compile(b)
}

// stepFor returns the Step of graph g: the one the module was traced with,
// or, for the apply program of a split step, a new one.
func (tp *trainProgram) stepFor(t *Trainer, g *graph.Graph, opt int) *Step {
	if tp.tracing != nil && tp.tracing.graph == g {
		return tp.tracing
	}
	return &Step{scope: t.eng.Store.RootScope(), graph: g, stage: RunningTrain, optimizerIdx: opt, trainer: t}
}

// traceInfo describes the outputs of one traced graph: [loss, logged values…,
// the update's outputs (engine.UpdateTrace)…, TBPTT hidden states…].
type traceInfo struct {
	logs        []stepLog
	metrics     []*metric
	update      engine.UpdateTrace
	normMetrics []*metric
	manualSteps int // optimizer steps a manual TrainingStep takes
	numHidden   int // TBPTT hidden-state outputs, last
	hiddenOut   []*tensors.Tensor
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

// program returns (compiling on first use) the step of optimizer opt in mode.
func (a *automaticOptimization) program(opt int, mode engine.Accumulation) (*trainProgram, error) {
	key := programKey{opt, mode}
	if tp, ok := a.programs[key]; ok {
		return tp, nil
	}
	t := a.t
	tp := &trainProgram{infos: map[graph.GraphId]*traceInfo{}}
	name := "TrainingStep"
	if len(a.opts) > 1 && opt >= 0 {
		name = fmt.Sprintf("TrainingStep[optimizer %d]", opt)
	}
	var err error
	if a.manual {
		tp.manual, err = t.eng.Compile(name, engine.Training, func(scope *model.Scope, inputs, labels []*graph.Node) []*graph.Node {
			info := &traceInfo{}
			outs := a.traceManual(scope, inputs, labels, info)
			tp.traced = info
			return outs
		})
	} else {
		tp.step, err = t.eng.CompileTrainStep(name, mode, func(scope *model.Scope, inputs, labels []*graph.Node) engine.Forward {
			s := &Step{scope: scope, graph: graphOf(inputs, labels), stage: RunningTrain, optimizerIdx: opt, trainer: t, metrics: t.logs.trainMetrics}
			loss := t.module.TrainingStep(s, Batch{Inputs: inputs, Labels: labels, Parts: t.batchParts()})
			return a.forward(tp, s, loss, nil)
		}, a.updateFn(tp, opt), a.reduce)
	}
	if err != nil {
		return nil, err
	}
	if tp.manual != nil {
		tp.manual.SetCarry(t.logs.trainMetrics.carry)
	} else {
		tp.step.SetCarry(t.logs.trainMetrics.carry)
		tp.step.Profile = t.profile
	}
	a.programs[key] = tp
	return tp, nil
}

// forward checks a traced training step's loss and returns its outputs for
// the engine: the loss and the logged values first, trailing after the
// update's outputs.
func (a *automaticOptimization) forward(tp *trainProgram, s *Step, loss *graph.Node, trailing []*graph.Node) engine.Forward {
	if loss == nil {
		panic("TrainingStep returned a nil loss")
	}
	if !loss.Shape().IsScalar() || !loss.DType().IsFloat() {
		panic(fmt.Sprintf("TrainingStep must return a floating-point scalar loss, got shape %s", loss.Shape()))
	}
	info := &traceInfo{numHidden: len(trailing)}
	tp.traced, tp.tracing = info, s
	return engine.Forward{Loss: loss, Trailing: trailing, Outputs: func() []*graph.Node {
		info.logs = s.logs
		outs := []*graph.Node{loss}
		for _, l := range s.logs {
			outs = append(outs, l.value)
		}
		return outs
	}}
}

// updateFn returns the engine's update of optimizer opt, its hooks bound to
// the Step of the graph being traced.
func (a *automaticOptimization) updateFn(tp *trainProgram, opt int) engine.UpdateFn {
	return func(g *graph.Graph) *engine.UpdateSpec {
		return a.updateSpec(tp.stepFor(a.t, g, opt), opt)
	}
}

// updateSpec returns the update of optimizer opt with the trainer's
// trace-time hooks, clipping and checks (the engine sets its accumulation).
func (a *automaticOptimization) updateSpec(s *Step, opt int) *engine.UpdateSpec {
	t := a.t
	setup := &a.opts[opt]
	spec := &engine.UpdateSpec{
		OptimizerIdx:   opt,
		Optimizer:      setup.Optimizer,
		Precision:      t.cfg.precision,
		LRScale:        setup.lrScale,
		TrackGradNorm:  t.cfg.TrackGradNorm,
		DetectAnomaly:  t.cfg.DetectAnomaly,
		TerminateOnNaN: t.cfg.TerminateOnNaN,
	}
	spec.Vars = func() []*model.Variable {
		used := engine.TrainableVariables(t.eng.Store, s.graph)
		t.checkLoaded(s.graph, used)
		var vars []*model.Variable
		for _, v := range used {
			if setup.owns(v) {
				vars = append(vars, v)
			}
		}
		if len(vars) == 0 {
			what := "TrainingStep"
			if a.manual {
				what = "the loss"
			}
			panic(fmt.Sprintf("optimizer %d has no trainable variables used by %s (Params %q)", opt, what, setup.Params))
		}
		return vars
	}
	spec.BeforeBackward = func(loss *graph.Node) {
		t.traceHooks(hookOnBeforeBackward, traceArgs{step: s, loss: loss})
	}
	spec.AfterBackward = func(grads []Gradient) {
		t.traceHooks(hookOnAfterBackward, traceArgs{step: s, grads: grads})
	}
	spec.Clip = func(grads []Gradient) {
		if c, ok := t.module.(GradientClipper); ok {
			c.ConfigureGradientClipping(s, opt, grads, t.cfg.GradientClipVal, t.cfg.GradientClipAlgorithm)
		} else {
			ClipGradients(grads, t.cfg.GradientClipVal, t.cfg.GradientClipAlgorithm)
		}
	}
	spec.BeforeOptimizerStep = func(grads []Gradient) {
		t.traceHooks(hookOnBeforeOptimizerStep, traceArgs{step: s, grads: grads, optimizerIdx: opt})
	}
	return spec
}

// graphOf returns the graph of the first node.
func graphOf(groups ...[]*graph.Node) *graph.Graph {
	for _, nodes := range groups {
		if len(nodes) > 0 {
			return nodes[0].Graph()
		}
	}
	panic("the batch has no inputs and no labels")
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

// compileFirst compiles the programs the first batch runs.
func (a *automaticOptimization) compileFirst(b *data.Batch) error {
	defer a.t.profile(actCompileTraining)()
	if a.t.cfg.TruncatedBPTTSteps > 0 {
		return nil // traced per split shape
	}
	if a.manual {
		tp, err := a.program(manualStep, engine.ApplyAtOnce)
		if err != nil {
			return err
		}
		return tp.compile(b)
	}
	mode := engine.ApplyAtOnce
	if a.t.cfg.accumulate > 1 {
		mode = engine.AccumulateOnly
	}
	for _, opt := range a.due(0) {
		tp, err := a.program(opt, mode)
		if err != nil {
			return err
		}
		if err := tp.compile(b); err != nil {
			return err
		}
	}
	return nil
}

// setAccumulationFactor makes the compiled steps divide the loss by k,
// writing the factor's variable when it holds another value (a change by
// SetAccumulateGradBatches, or a restored checkpoint).
func (a *automaticOptimization) setAccumulationFactor(k int) error {
	store := a.t.eng.Store
	if v := store.GetVariable(engine.AccumulationFactorPath); v != nil && a.factorSet != nil {
		if cur, err := v.Value(); err == nil && cur == a.factorSet && a.factor == k {
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
	a.factor, a.factorSet = k, cur
	return nil
}
