package volt

import (
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/internal/syncbn"
)

// This file builds the training steps as GoMLX programs: it traces the
// module's TrainingStep with the update the engine adds (gradients,
// accumulation, clipping, the optimizer), compiles it per accumulation mode
// and optimizer, and reads what its outputs mean. The loops reach it only
// through trainSteps (compiledSteps).

// programKey identifies a compiled training step: the optimizer (manualStep
// for the manual step) and the accumulation mode.
type programKey struct {
	opt  int
	mode engine.Accumulation
}

// trainProgram is one compiled training step and what its outputs mean.
type trainProgram struct {
	step   *engine.TrainStep // automatic optimization: volt builds the update
	manual *engine.Program   // manual optimization: the module steps its optimizers
	replay *manualReplay     // manual optimization under data-parallel training
	sync   *syncSteps        // automatic optimization with Config.SyncBatchNorm under data-parallel training
	infos  map[graph.GraphId]*traceInfo
	traced *traceInfo // filled while tracing, bound to its graph at first run
	// tracing is the Step of the graph being traced, for the update's hooks.
	tracing *Step
}

// run executes the step on b: its outputs, the id of the graph that ran and
// what the update's outputs mean.
func (tp *trainProgram) run(b *data.Batch) ([]*tensors.Tensor, graph.GraphId, engine.UpdateTrace, error) {
	if tp.replay != nil {
		outs, gid, err := tp.replay.run(b)
		return outs, gid, engine.UpdateTrace{}, err
	}
	if tp.manual != nil {
		outs, gid, err := tp.manual.Run(b)
		return outs, gid, engine.UpdateTrace{}, err
	}
	if tp.sync != nil {
		return tp.sync.run(b)
	}
	return tp.step.Run(b)
}

// compile traces and compiles the step for b's shapes.
func (tp *trainProgram) compile(b *data.Batch) error {
	if tp.replay != nil {
		return tp.replay.compile(b)
	}
	if tp.manual != nil {
		return tp.manual.Compile(b)
	}
	if tp.sync != nil {
		return tp.sync.compile(b)
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
	manualSteps int          // optimizer steps a manual TrainingStep takes
	numHidden   int          // TBPTT hidden-state outputs, last
	labelChecks []labelCheck // ClassLabels checks, whose outputs follow the logged values
	// bound: metrics and normMetrics are the training results' entries
	// (logging.recordTrainStep binds them at the graph's first run).
	bound bool
}

// program returns (compiling on first use) the step of optimizer opt in mode.
func (c *compiledSteps) program(opt int, mode engine.Accumulation) (*trainProgram, error) {
	key := programKey{opt, mode}
	if tp, ok := c.programs[key]; ok {
		return tp, nil
	}
	t := c.t
	tp := &trainProgram{infos: map[graph.GraphId]*traceInfo{}}
	name := "TrainingStep"
	if len(c.opts) > 1 && opt >= 0 {
		name = fmt.Sprintf("TrainingStep[optimizer %d]", opt)
	}
	var err error
	if c.syncBatchNorm() {
		if c.manual {
			return nil, fmt.Errorf("Config.SyncBatchNorm is not supported with manual optimization (%T.AutomaticOptimization "+
				"returns false); leave SyncBatchNorm off, or use automatic optimization", t.module)
		}
		tp.sync = &syncSteps{c: c, tp: tp, opt: opt, name: name, counts: map[graph.GraphId][]int{}}
	}
	if c.manual && c.reduce != nil {
		tp.replay = &manualReplay{c: c, tp: tp, name: name, final: map[graph.GraphId]bool{}}
		c.programs[key] = tp
		return tp, nil
	}
	if c.manual {
		tp.manual, err = t.eng.Compile(name, engine.Training, func(scope *model.Scope, inputs, labels []*graph.Node) []*graph.Node {
			info := &traceInfo{}
			outs := c.traceManual(scope, inputs, labels, info, nil)
			tp.traced = info
			return outs
		})
	} else {
		tp.step, err = t.eng.CompileTrainStep(name, mode, func(scope *model.Scope, inputs, labels []*graph.Node) engine.Forward {
			var synced *syncbn.Trace
			if tp.sync != nil {
				var end func()
				inputs, synced, end = tp.sync.begin(syncbn.RoleFinal, inputs, labels)
				defer end()
			}
			s := &Step{scope: scope, graph: graphOf(inputs, labels), stage: RunningTrain, optimizerIdx: opt, trainer: t, metrics: t.logs.trainMetrics,
				checksLabels: t.cfg.DetectAnomaly}
			loss := t.module.TrainingStep(s, Batch{Inputs: inputs, Labels: labels, Parts: c.parts})
			f := c.forward(tp, s, loss, nil)
			if synced != nil {
				f.Extra = synced.Surrogate
			}
			return f
		}, c.updateFn(tp, opt), c.reduce)
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
	c.programs[key] = tp
	return tp, nil
}

// forward checks a traced training step's loss and returns its outputs for
// the engine: the loss and the logged values first, trailing after the
// update's outputs.
func (c *compiledSteps) forward(tp *trainProgram, s *Step, loss *graph.Node, trailing []*graph.Node) engine.Forward {
	if loss == nil {
		panic("TrainingStep returned a nil loss")
	}
	if !loss.Shape().IsScalar() || !loss.DType().IsFloat() {
		panic(fmt.Sprintf("TrainingStep must return a floating-point scalar loss, got shape %s", loss.Shape()))
	}
	info := &traceInfo{numHidden: len(trailing)}
	tp.traced, tp.tracing = info, s
	return engine.Forward{Loss: loss, Trailing: trailing, Outputs: func() []*graph.Node {
		info.logs, info.labelChecks = s.logs, s.labelChecks
		outs := []*graph.Node{loss}
		for _, l := range s.logs {
			outs = append(outs, l.value)
		}
		return append(outs, s.labelCheckOutputs()...)
	}}
}

// updateFn returns the engine's update of optimizer opt, its hooks bound to
// the Step of the graph being traced.
func (c *compiledSteps) updateFn(tp *trainProgram, opt int) engine.UpdateFn {
	return func(g *graph.Graph) *engine.UpdateSpec {
		return c.updateSpec(tp.stepFor(c.t, g, opt), opt)
	}
}

// updateSpec returns the update of optimizer opt with the trainer's
// trace-time hooks, clipping and checks (the engine sets its accumulation).
func (c *compiledSteps) updateSpec(s *Step, opt int) *engine.UpdateSpec {
	t := c.t
	setup := &c.opts[opt]
	spec := &engine.UpdateSpec{
		OptimizerIdx: opt,
		Optimizer:    setup.Optimizer,
		Precision:    t.cfg.precision,
		LRScale: func(v *model.Variable) (int, float64, bool) {
			return setup.lrScale(t.eng.Store, v)
		},
		WeightDecay: func(v *model.Variable) (float64, bool) {
			return setup.weightDecay(t.eng.Store, v)
		},
		TrackGradNorm:  t.cfg.TrackGradNorm,
		DetectAnomaly:  t.cfg.DetectAnomaly,
		TerminateOnNaN: t.cfg.TerminateOnNaN,
	}
	spec.Vars = func() []*model.Variable {
		used := engine.TrainableVariables(t.eng.Store, s.graph)
		t.checkLoaded(s.graph, used)
		if err := setup.checkSelectors(t.eng.Store); err != nil {
			panic(fmt.Sprintf("optimizer %d: %v", opt, err))
		}
		var vars []*model.Variable
		for _, v := range used {
			if setup.owns(v) {
				vars = append(vars, v)
			}
		}
		if len(vars) == 0 {
			what := "TrainingStep"
			if c.manual {
				what = "the loss"
			}
			panic(fmt.Sprintf("optimizer %d has no trainable variables used by %s (Params %q)", opt, what, setup.Params))
		}
		return vars
	}
	spec.BeforeBackward = func(loss *graph.Node) {
		t.traceHooks(hookOnBeforeBackward, traceArgs{step: s, loss: loss})
	}
	if len(t.hooks.by[hookOnAfterBackward]) > 0 {
		// Only when a hook is there: without one, a data-parallel step
		// divides the loss rather than every gradient (UpdateSpec.Ranks).
		spec.AfterBackward = func(grads []Gradient) {
			t.traceHooks(hookOnAfterBackward, traceArgs{step: s, grads: grads})
		}
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

// checkLoaded runs once, at the first trace after a restore: in strict mode
// every trainable variable graph g uses must have come from the checkpoint
// and every module variable of the checkpoint must be used by g. A missing
// scheduler state found when Fit started (l.schedulerErr) is reported
// after the variables: a checkpoint of another model is named as such.
func (t *Trainer) checkLoaded(g *graph.Graph, vars []*model.Variable) {
	l := t.ckpt.loaded
	if l == nil {
		return
	}
	t.ckpt.loaded = nil
	if !l.strict {
		return
	}
	var missing, unexpected []string
	for _, v := range vars {
		if !l.loaded[v.Path()] {
			missing = append(missing, v.Path())
		}
	}
	for name := range l.loaded {
		if v := t.eng.Store.GetVariable(name); v != nil && v.Trainable && !v.InUseByGraph(g) {
			unexpected = append(unexpected, name)
		}
	}
	if len(missing)+len(unexpected) == 0 {
		if l.schedulerErr != nil {
			panic(l.schedulerErr)
		}
		return
	}
	slices.Sort(missing)
	slices.Sort(unexpected)
	panic(fmt.Errorf("checkpoint %s does not match the module (use volt.NonStrict() to load it anyway): missing variables %q; unexpected variables %q",
		l.path, missing, unexpected))
}
