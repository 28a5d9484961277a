package engine

import (
	"fmt"
	"math"
	"strconv"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/internal/pyfloat"
	"github.com/voltml/volt/optim"
)

// This file builds, inside a traced training step, everything that follows
// the loss: gradients (accumulated or not, scaled and unscaled for mixed
// precision), the trace-time hooks, gradient norms and finite checks,
// clipping and the optimizer update. Backward and Apply are the two halves;
// a data-parallel step runs them as two programs with the all-reduce of the
// gradients on the host between them.

// Gradient pairs a trainable variable with its gradient node.
type Gradient struct {
	Variable *model.Variable
	Value    *graph.Node
}

// Values returns the gradient nodes of grads.
func Values(grads []Gradient) []*graph.Node {
	values := make([]*graph.Node, len(grads))
	for i, g := range grads {
		values[i] = g.Value
	}
	return values
}

// Accumulation says what a training step does with its gradients.
type Accumulation int

const (
	// ApplyAtOnce applies each batch's gradients (no accumulation).
	ApplyAtOnce Accumulation = iota
	// AccumulateOnly adds the gradients into accumulators.
	AccumulateOnly
	// AccumulateAndApply adds the last gradients and applies the sum.
	AccumulateAndApply
)

// Store paths of the update's own variables.
const (
	// MasterPrefix holds the float32 master copy of each trainable variable
	// in mixed precision.
	MasterPrefix = "/volt/master"
	// LossScalePath holds "16-mixed"'s dynamic loss scale.
	LossScalePath = "/volt/loss_scale"
	// AccumulationFactorPath holds the number of batches accumulated per
	// optimization step: the loss is divided by it, read from a variable so
	// that changing the factor never needs a retrace.
	AccumulationFactorPath = "/volt/accumulate_grad_batches"
)

// UpdateSpec is what one optimizer's update does; the hooks run at trace
// time and may replace gradient values.
type UpdateSpec struct {
	OptimizerIdx int
	Optimizer    *optim.Optimizer
	// Vars returns the trainable variables the optimizer updates, in
	// order. Backward calls it after BeforeBackward, which may freeze some.
	Vars         func() []*model.Variable
	Precision    Precision
	Accumulation Accumulation
	// LRScale returns the learning-rate multiplier of v's parameter group
	// (its group index and initial scale), ok false outside any group.
	LRScale func(v *model.Variable) (group int, scale float64, ok bool)
	// WeightDecay returns the weight decay of v's parameter group, ok false
	// where the optimizer's own applies.
	WeightDecay func(v *model.Variable) (wd float64, ok bool)

	BeforeBackward      func(loss *graph.Node)
	AfterBackward       func(grads []Gradient)
	Clip                func(grads []Gradient)
	BeforeOptimizerStep func(grads []Gradient)

	// TrackGradNorm is the p of the logged gradient norms (0: none).
	TrackGradNorm float64
	// DetectAnomaly outputs whether each gradient is finite.
	DetectAnomaly bool
	// TerminateOnNaN outputs whether each updated parameter is finite.
	TerminateOnNaN bool
	// Ranks, above 1, divides the gradients by the number of ranks of a
	// data-parallel step, whose all-reduce then sums them into their mean
	// (Reducer.Ranks). AfterBackward sees them before the division: this
	// rank's own gradients.
	Ranks int
	// Extra, when set, is a scalar added to the loss before it is divided
	// (by the accumulation factor, the ranks) and scaled: it is part of the
	// objective the gradients are of, not of the loss BeforeBackward sees.
	Extra *graph.Node
}

// UpdateTrace says what the outputs Apply added mean, in order: one scalar
// per NormNames, then a bool vector of finite gradients (GradFlags), one of
// finite parameters (ParamFlags), and whether the update ran (Gate).
type UpdateTrace struct {
	NormNames  []string
	ParamPaths []string // the variables in flag order
	GradFlags  bool
	ParamFlags bool
	Gate       bool
}

// Backward builds the gradients of loss for spec's variables. With
// accumulation it adds them into per-optimizer accumulators: AccumulateOnly
// returns nil (nothing to apply), AccumulateAndApply returns the sums and
// resets the accumulators.
func Backward(store *model.Store, loss *graph.Node, spec *UpdateSpec) []Gradient {
	g := loss.Graph()
	if spec.BeforeBackward != nil {
		spec.BeforeBackward(loss)
	}
	vars := spec.Vars()
	objective := loss
	if spec.Extra != nil {
		objective = graph.Add(objective, graph.ConvertDType(spec.Extra, loss.DType()))
	}
	if spec.Accumulation != ApplyAtOnce {
		objective = graph.Div(objective, graph.ConvertDType(accumulationFactor(store, g), loss.DType()))
	}
	// A data-parallel step's division by the number of ranks goes into the
	// loss, which costs nothing per gradient, unless a hook must see the
	// undivided gradients or the loss is in half precision (where dividing
	// by a rank count that is not a power of 2 rounds).
	divideLoss := spec.Ranks > 1 && spec.AfterBackward == nil && !spec.Precision.Mixed()
	if divideLoss {
		objective = graph.Div(objective, graph.Scalar(g, objective.DType(), spec.Ranks))
	}
	var scale *graph.Node
	if spec.Precision.LossScaling() {
		scale = lossScale(store, g)
		objective = graph.Mul(objective, graph.ConvertDType(scale, objective.DType()))
	}
	values := make([]*graph.Node, len(vars))
	for i, v := range vars {
		values[i] = v.NodeValue(g)
	}
	grads := make([]Gradient, len(vars))
	for i, gv := range graph.Gradient(objective, values...) {
		if spec.Precision.Mixed() {
			// Gradients of the compute copies, in float32 and unscaled.
			gv = graph.ConvertDType(gv, dtypes.Float32)
			if scale != nil {
				gv = graph.Div(gv, scale)
			}
		}
		grads[i] = Gradient{Variable: vars[i], Value: gv}
	}
	if spec.AfterBackward != nil {
		spec.AfterBackward(grads)
	}
	if spec.Ranks > 1 && !divideLoss {
		for i := range grads {
			v := grads[i].Value
			grads[i].Value = graph.Div(v, graph.Scalar(g, v.DType(), spec.Ranks))
		}
	}
	if spec.Accumulation == ApplyAtOnce {
		return grads
	}
	for i := range grads {
		acc := accumulator(store, spec.OptimizerIdx, grads[i].Variable, grads[i].Value.DType())
		sum := graph.Add(acc.NodeValue(g), grads[i].Value)
		if spec.Accumulation == AccumulateOnly {
			acc.SetNodeValue(sum)
		} else {
			acc.SetNodeValue(graph.ZerosLike(sum))
			grads[i].Value = sum
		}
	}
	if spec.Accumulation == AccumulateOnly {
		return nil
	}
	return grads
}

// Apply builds the update from grads (in graph g): norms, finite checks,
// clipping, the optimizer step on the variables (or their float32 masters)
// and the compute copies cast back. It returns the outputs it adds.
func Apply(store *model.Store, g *graph.Graph, grads []Gradient, spec *UpdateSpec) ([]*graph.Node, UpdateTrace) {
	outs, trace := Prepare(grads, spec)
	vars := make([]*model.Variable, len(grads))
	for i, gr := range grads {
		vars[i] = gr.Variable
	}
	params := vars
	if spec.Precision.Mixed() {
		params = make([]*model.Variable, len(vars))
		for i, v := range vars {
			params[i] = MasterOf(store, v)
		}
	}
	var gate *graph.Node
	if spec.Precision.LossScaling() {
		// Skip the update when a gradient overflowed (GradScaler's rule).
		gate = graph.LogicalAll(FiniteFlags(Values(grads)))
	}
	spec.Optimizer.ApplyWithOptions(store, spec.OptimizerIdx, params, Values(grads), paramOptions(store, g, spec, vars), gate)
	if spec.Precision.Mixed() {
		for i, v := range vars {
			v.SetNodeValue(graph.ConvertDType(params[i].NodeValue(g), v.DType()))
		}
	}
	if spec.TerminateOnNaN {
		updated := make([]*graph.Node, len(params))
		for i, v := range params {
			updated[i] = v.NodeValue(g)
		}
		outs = append(outs, FiniteFlags(updated))
		trace.ParamFlags = true
	}
	if gate != nil {
		outs = append(outs, gate)
		trace.Gate = true
	}
	return outs, trace
}

// Prepare builds what the update does before the optimizer step: the
// gradient norms, the finite checks and clipping, then the
// BeforeOptimizerStep hooks, which may replace the gradients in grads. It
// returns the outputs it adds; Apply runs it first, and a step whose
// optimizer runs on the host (hostUpdate) runs it alone.
func Prepare(grads []Gradient, spec *UpdateSpec) ([]*graph.Node, UpdateTrace) {
	var trace UpdateTrace
	outs := gradNorms(grads, spec.TrackGradNorm, &trace)
	if spec.DetectAnomaly || spec.TerminateOnNaN {
		for _, gr := range grads {
			trace.ParamPaths = append(trace.ParamPaths, gr.Variable.Path())
		}
	}
	if spec.DetectAnomaly {
		outs = append(outs, FiniteFlags(Values(grads)))
		trace.GradFlags = true
	}
	if spec.Clip != nil {
		spec.Clip(grads)
	}
	if spec.BeforeOptimizerStep != nil {
		spec.BeforeOptimizerStep(grads)
	}
	return outs, trace
}

// accumulator returns the variable in which optimizer opt sums v's gradients.
func accumulator(store *model.Store, opt int, v *model.Variable, dtype dtypes.DType) *model.Variable {
	acc := store.VariableWithShape(fmt.Sprintf("/volt/accumulate_%d%s", opt, v.Path()), shapes.Make(dtype, v.Shape().Dimensions...), graph.Zeros)
	acc.SetTrainable(false)
	return acc
}

// accumulationFactor returns the accumulation factor's node.
func accumulationFactor(store *model.Store, g *graph.Graph) *graph.Node {
	v := store.VariableWithValue(AccumulationFactorPath, float32(1))
	v.SetTrainable(false)
	return v.NodeValue(g)
}

// SetAccumulationFactor writes k, the number of batches accumulated per
// optimization step, for the steps that run next.
func SetAccumulationFactor(store *model.Store, k int) error {
	return setScalar(store, AccumulationFactorPath, float32(k))
}

// lossScale returns the loss-scale node of a traced step.
func lossScale(store *model.Store, g *graph.Graph) *graph.Node {
	v := store.VariableWithValue(LossScalePath, float32(65536))
	v.SetTrainable(false)
	return v.NodeValue(g)
}

// SetLossScale writes the dynamic loss scale for the steps that run next.
func SetLossScale(store *model.Store, scale float64) error {
	return setScalar(store, LossScalePath, float32(scale))
}

// MasterOf returns the float32 master variable of compute variable v.
func MasterOf(store *model.Store, v *model.Variable) *model.Variable {
	m := store.GetVariable(MasterPrefix + v.Path())
	if m == nil {
		panic(fmt.Sprintf("mixed precision: no master weights for %s (the variable appeared after the first step?)", v.Path()))
	}
	return m
}

// LRScalePath is where group g of optimizer opt keeps its multiplier.
func LRScalePath(opt, g int) string {
	return fmt.Sprintf("%s/group_%d/lr_scale", optim.StatePrefix(opt), g)
}

// lrScales returns each variable's group learning-rate multiplier node (nil
// for variables in no group), or nil when no variable is in a group.
func lrScales(store *model.Store, g *graph.Graph, spec *UpdateSpec, vars []*model.Variable) []*graph.Node {
	if spec.LRScale == nil {
		return nil
	}
	var scales []*graph.Node
	for i, v := range vars {
		group, scale, ok := spec.LRScale(v)
		if !ok {
			continue
		}
		if scales == nil {
			scales = make([]*graph.Node, len(vars))
		}
		sv := store.VariableWithShape(LRScalePath(spec.OptimizerIdx, group), shapes.Make(dtypes.Float32), func(g *graph.Graph, s shapes.Shape) *graph.Node {
			return graph.ConstAsDType(g, s.DType, scale)
		})
		sv.SetTrainable(false)
		scales[i] = sv.NodeValue(g)
	}
	return scales
}

// paramOptions returns each variable's parameter-group options (learning
// rate multiplier, weight decay), or nil when no variable is in a group.
func paramOptions(store *model.Store, g *graph.Graph, spec *UpdateSpec, vars []*model.Variable) []optim.ParamOptions {
	scales := lrScales(store, g, spec, vars)
	var opts []optim.ParamOptions
	for i, v := range vars {
		var o optim.ParamOptions
		if scales != nil {
			o.LRScale = scales[i]
		}
		if spec.WeightDecay != nil {
			if wd, ok := spec.WeightDecay(v); ok {
				o.WeightDecay = &wd
			}
		}
		if o.LRScale == nil && o.WeightDecay == nil {
			continue
		}
		if opts == nil {
			opts = make([]optim.ParamOptions, len(vars))
		}
		opts[i] = o
	}
	return opts
}

// gradNorms returns the TrackGradNorm outputs: each gradient's p-norm, then
// the total, named as Lightning names them.
func gradNorms(grads []Gradient, p float64, trace *UpdateTrace) []*graph.Node {
	if p == 0 {
		return nil
	}
	prefix := "grad_" + pythonFloat(p) + "_norm"
	var outs []*graph.Node
	for _, gr := range grads {
		outs = append(outs, graph.ConvertDType(optim.NormOf(gr.Value, p), gr.Value.DType()))
		trace.NormNames = append(trace.NormNames, prefix+gr.Variable.Path())
	}
	outs = append(outs, optim.GradNorm(Values(grads), p))
	trace.NormNames = append(trace.NormNames, prefix+"_total")
	for i := range outs {
		outs[i], _ = ToScalar(outs[i])
	}
	return outs
}

// pythonFloat formats p as Python's str(float) does: 2.0, 0.5, inf.
func pythonFloat(p float64) string {
	if math.IsInf(p, 0) || math.IsNaN(p) {
		return pyfloat.Format(p, -1)
	}
	s := strconv.FormatFloat(p, 'f', -1, 64)
	if p == math.Trunc(p) {
		s += ".0"
	}
	return s
}

// FiniteFlags returns a bool vector: whether each node is entirely finite.
func FiniteFlags(nodes []*graph.Node) *graph.Node {
	flags := make([]*graph.Node, len(nodes))
	for i, n := range nodes {
		flags[i] = graph.LogicalAll(graph.IsFinite(n))
	}
	return graph.Stack(flags, 0)
}

// setScalar writes a float32 scalar into the non-trainable variable at path,
// creating it if needed.
func setScalar(store *model.Store, path string, value float32) error {
	t := tensors.FromScalar(value)
	v := store.GetVariable(path)
	if v == nil {
		v, err := store.CreateVariable(path, t)
		if err != nil {
			return err
		}
		v.SetTrainable(false)
		return nil
	}
	return v.SetValue(t)
}

// SetLRScale writes the learning-rate multiplier of group g of optimizer
// opt, if its variable exists (a step traced later creates it with the
// group's scale).
func SetLRScale(store *model.Store, opt, g int, scale float64) error {
	if v := store.GetVariable(LRScalePath(opt, g)); v != nil {
		return v.SetValue(tensors.FromScalar(float32(scale)))
	}
	return nil
}

// SetLearningRate writes lr into optimizer opt's learning-rate variable,
// creating it before the first step: in float64 when the model computes in
// float64, else in float32 (never in half precision).
func (e *Engine) SetLearningRate(opt int, lr float64) error {
	path := optim.StatePrefix(opt) + "/lr"
	v := e.Store.GetVariable(path)
	dtype := dtypes.Float32
	switch {
	case v != nil:
		dtype = v.DType()
	case e.DType == dtypes.Float64:
		dtype = dtypes.Float64
	}
	value := tensors.FromScalar(float32(lr))
	if dtype == dtypes.Float64 {
		value = tensors.FromScalar(lr)
	}
	if v == nil {
		v, err := e.Store.CreateVariable(path, value)
		if err != nil {
			return err
		}
		v.SetTrainable(false)
		return nil
	}
	return v.SetValue(value)
}

// CreateMasters creates the float32 master copy of each variable at paths
// (mixed precision), from its current value.
func CreateMasters(store *model.Store, paths []string) error {
	for _, path := range paths {
		v := store.GetVariable(path)
		value, err := v.Value()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		m, err := store.CreateVariable(MasterPrefix+path, ToFloat32(value))
		if err != nil {
			return fmt.Errorf("master of %s: %w", path, err)
		}
		m.SetTrainable(false)
	}
	return nil
}

// KeepVariables makes every variable that graph g changed take the value it
// had when g started again, so that running g leaves the store as it found
// it (GoMLX then neither donates those variables' buffers nor writes them
// back). It panics when a changed variable has no parameter in g.
func KeepVariables(store *model.Store, g *graph.Graph) {
	for v := range store.IterVariables() {
		if !v.ChangedInGraph(g) {
			continue
		}
		p := g.GetParameterByName(v.Path())
		if p == nil {
			panic(fmt.Sprintf("KeepVariables: variable %s changed in graph %d has no parameter there", v.Path(), g.GraphId()))
		}
		v.SetNodeValue(p)
	}
}
