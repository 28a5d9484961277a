package volt

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/optim"
)

var nan = math.NaN()

// stepMode is what a compiled training step does with its gradients.
type stepMode int

const (
	// modeFused applies the gradients at once (no accumulation).
	modeFused stepMode = iota
	// modeAccumulate adds the gradients into accumulators.
	modeAccumulate
	// modeAccumulateApply adds the last gradients and applies the sum.
	modeAccumulateApply
)

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
}

type programKey struct {
	opt  int
	mode stepMode
}

// trainProgram is one compiled training step and what its outputs mean.
type trainProgram struct {
	prog   *engine.Program
	infos  map[graph.GraphId]*traceInfo
	traced *traceInfo // filled while tracing, bound to its graph at first run
}

// traceInfo describes the outputs of one traced graph: [loss, logged values…,
// gradient norms…, gradient finite flags?, parameter finite flags?].
type traceInfo struct {
	logs        []stepLog
	metrics     []*metric
	normNames   []string
	normMetrics []*metric
	paramPaths  []string
	gradFlags   bool
	paramFlags  bool
	manualSteps int  // optimizer steps a manual TrainingStep takes
	gateFlag    bool // "16-mixed": whether the gradients were finite (the update ran)
	numHidden   int  // TBPTT hidden-state outputs, last
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
	a := &automaticOptimization{t: t, opts: opts, programs: map[programKey]*trainProgram{}, manual: manualMode(t.module)}
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
		tp, err := a.program(-1, modeFused)
		if err != nil {
			return nil, 0, err
		}
		loss, info, err := a.t.runTrainProgram(tp, b)
		if err != nil {
			return nil, 0, err
		}
		a.out = StepOutput{loss: loss}
		return &a.out, info.manualSteps, nil
	}
	if a.t.cfg.TruncatedBPTTSteps > 0 {
		return a.runTBPTT(b)
	}
	k := a.t.cfg.accumulate
	boundary := (batchIdx+1)%k == 0 || lastInEpoch
	mode := modeFused
	if k > 1 {
		mode = modeAccumulate
		if boundary {
			mode = modeAccumulateApply
		}
	}
	a.out = StepOutput{}
	if err := a.ensureMasters(b); err != nil {
		return nil, 0, err
	}
	for _, opt := range a.due(batchIdx) {
		tp, err := a.program(opt, mode)
		if err != nil {
			return nil, 0, err
		}
		loss, _, err := a.t.runTrainProgram(tp, b)
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
func (a *automaticOptimization) program(opt int, mode stepMode) (*trainProgram, error) {
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
	tp.prog, err = t.eng.Compile(name, engine.Training, func(scope *model.Scope, inputs, labels []*graph.Node) []*graph.Node {
		info := &traceInfo{}
		var outs []*graph.Node
		if a.manual {
			outs = a.traceManual(scope, inputs, labels, info)
		} else {
			outs = a.trace(scope, inputs, labels, opt, mode, info)
		}
		tp.traced = info
		return outs
	})
	if err != nil {
		return nil, err
	}
	a.programs[key] = tp
	return tp, nil
}

// trace builds the training step graph of optimizer opt.
func (a *automaticOptimization) trace(scope *model.Scope, inputs, labels []*graph.Node, opt int, mode stepMode, info *traceInfo) []*graph.Node {
	t := a.t
	s := &Step{scope: scope, graph: graphOf(inputs, labels), stage: RunningTrain, optimizerIdx: opt, trainer: t}
	loss := t.module.TrainingStep(s, Batch{Inputs: inputs, Labels: labels, Parts: t.curParts})
	return a.finishTrace(s, loss, opt, mode, info)
}

// finishTrace adds to a traced training step everything after the loss: the
// trace-time hooks, gradients (accumulated or not), norms, NaN checks,
// clipping and the optimizer update. It returns the step's outputs.
func (a *automaticOptimization) finishTrace(s *Step, loss *graph.Node, opt int, mode stepMode, info *traceInfo) []*graph.Node {
	t := a.t
	store := t.eng.Store
	setup := &a.opts[opt]
	if loss == nil {
		panic("TrainingStep returned a nil loss")
	}
	if !loss.Shape().IsScalar() || !loss.DType().IsFloat() {
		panic(fmt.Sprintf("TrainingStep must return a floating-point scalar loss, got shape %s", loss.Shape()))
	}
	t.traceHooks(hookOnBeforeBackward, traceArgs{step: s, loss: loss})
	used := engine.TrainableVariables(store, s.graph)
	t.checkLoaded(s.graph, used)
	var vars []*model.Variable
	for _, v := range used {
		if setup.owns(v) {
			vars = append(vars, v)
		}
	}
	if len(vars) == 0 {
		panic(fmt.Sprintf("optimizer %d has no trainable variables used by TrainingStep (Params %q)", opt, setup.Params))
	}
	objective := loss
	if mode != modeFused {
		objective = graph.DivScalar(loss, float64(t.cfg.accumulate))
	}
	precision := t.cfg.precision
	var scale *graph.Node
	if precision.LossScaling() {
		scale = lossScale(store, s.graph)
		objective = graph.Mul(objective, graph.ConvertDType(scale, objective.DType()))
	}
	grads := make([]Gradient, len(vars))
	for i, g := range engine.Gradients(objective, vars) {
		if precision.Mixed() {
			// Gradients of the compute copies, in float32 and unscaled.
			g = graph.ConvertDType(g, dtypes.Float32)
			if scale != nil {
				g = graph.Div(g, scale)
			}
		}
		grads[i] = Gradient{Variable: vars[i], Value: g}
	}
	t.traceHooks(hookOnAfterBackward, traceArgs{step: s, grads: grads})
	outs := []*graph.Node{loss}
	for _, l := range s.logs {
		outs = append(outs, l.value)
	}
	info.logs = s.logs
	if mode != modeFused {
		for i := range grads {
			acc := accumulator(store, opt, grads[i].Variable, grads[i].Value.DType())
			sum := graph.Add(acc.NodeValue(s.graph), grads[i].Value)
			if mode == modeAccumulate {
				acc.SetNodeValue(sum)
			} else {
				acc.SetNodeValue(graph.ZerosLike(sum))
				grads[i].Value = sum
			}
		}
		if mode == modeAccumulate {
			return outs
		}
	}
	outs = append(outs, a.gradNorms(grads, info)...)
	if t.cfg.DetectAnomaly {
		outs = append(outs, finiteFlags(gradientValues(grads)))
		info.gradFlags = true
	}
	if c, ok := t.module.(GradientClipper); ok {
		c.ConfigureGradientClipping(s, opt, grads, t.cfg.GradientClipVal, t.cfg.GradientClipAlgorithm)
	} else {
		ClipGradients(grads, t.cfg.GradientClipVal, t.cfg.GradientClipAlgorithm)
	}
	t.traceHooks(hookOnBeforeOptimizerStep, traceArgs{step: s, optimizerIdx: opt, grads: grads})
	params := vars
	if precision.Mixed() {
		params = make([]*model.Variable, len(vars))
		for i, v := range vars {
			params[i] = masterOf(store, v)
		}
	}
	var gate *graph.Node
	if scale != nil {
		// Skip the update when a gradient overflowed (GradScaler's rule).
		gate = graph.LogicalAll(finiteFlags(gradientValues(grads)))
	}
	setup.Optimizer.ApplyWithLRScales(store, opt, params, gradientValues(grads), lrScales(store, opt, setup, vars, s.graph), gate)
	if precision.Mixed() {
		for i, v := range vars {
			v.SetNodeValue(graph.ConvertDType(params[i].NodeValue(s.graph), v.DType()))
		}
	}
	if t.cfg.TerminateOnNaN {
		updated := make([]*graph.Node, len(params))
		for i, v := range params {
			updated[i] = v.NodeValue(s.graph)
			info.paramPaths = append(info.paramPaths, vars[i].Path())
		}
		outs = append(outs, finiteFlags(updated))
		info.paramFlags = true
	}
	if gate != nil {
		outs = append(outs, gate)
		info.gateFlag = true
	}
	return outs
}

// accumulator returns the variable in which optimizer opt sums v's gradients.
func accumulator(store *model.Store, opt int, v *model.Variable, dtype dtypes.DType) *model.Variable {
	acc := store.VariableWithShape(fmt.Sprintf("/volt/accumulate_%d%s", opt, v.Path()), shapes.Make(dtype, v.Shape().Dimensions...), graph.Zeros)
	acc.SetTrainable(false)
	return acc
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
	a.t.curParts = b.Parts
	if err := a.ensureMasters(b); err != nil {
		return err
	}
	if err := a.compileFirst(b); err != nil {
		return err
	}
	return a.t.eng.InitializeVariables()
}

// compileFirst compiles the programs the first batch runs.
func (a *automaticOptimization) compileFirst(b *data.Batch) error {
	if a.t.cfg.TruncatedBPTTSteps > 0 {
		return nil // traced per split shape
	}
	if a.manual {
		tp, err := a.program(-1, modeFused)
		if err != nil {
			return err
		}
		return tp.prog.Compile(b)
	}
	mode := modeFused
	if a.t.cfg.accumulate > 1 {
		mode = modeAccumulate
	}
	for _, opt := range a.due(0) {
		tp, err := a.program(opt, mode)
		if err != nil {
			return err
		}
		if err := tp.prog.Compile(b); err != nil {
			return err
		}
	}
	return nil
}
