package optim

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
)

// StatePrefix returns the store path under which optimizer number index keeps
// its learning rate, step counter and per-parameter state.
func StatePrefix(index int) string { return fmt.Sprintf("/volt/optimizer_%d", index) }

// LRVariable returns (creating it on first use) the variable that holds the
// learning rate of optimizer number index, in dtype.
func (o *Optimizer) LRVariable(store *model.Store, index int, dtype dtypes.DType) *model.Variable {
	v := store.VariableWithShape(StatePrefix(index)+"/lr", shapes.Make(dtype), func(g *graph.Graph, s shapes.Shape) *graph.Node {
		return graph.ConstAsDType(g, s.DType, o.LR)
	})
	v.SetTrainable(false)
	return v
}

// lrVariableFor returns the learning-rate variable Apply reads for params: the
// existing one, whatever its dtype, or a new one in float64 if any parameter
// is float64 and float32 otherwise (never a half-precision LR). One variable
// serves parameters of every dtype; Apply converts its value per parameter.
func (o *Optimizer) lrVariableFor(store *model.Store, index int, params []*model.Variable) *model.Variable {
	if v := store.GetVariable(StatePrefix(index) + "/lr"); v != nil {
		return v
	}
	dtype := dtypes.Float32
	for _, p := range params {
		if p.DType() == dtypes.Float64 {
			dtype = dtypes.Float64
		}
	}
	return o.LRVariable(store, index, dtype)
}

// stepVariable returns the number of updates optimizer index has applied.
func stepVariable(store *model.Store, index int) *model.Variable {
	v := store.VariableWithShape(StatePrefix(index)+"/step", shapes.Make(dtypes.Int64), graph.Zeros)
	v.SetTrainable(false)
	return v
}

// stateVariable returns a zero-initialised, non-trainable variable shaped like
// param, named after it, that holds one kind of optimizer state.
func stateVariable(store *model.Store, index int, param *model.Variable, kind string) *model.Variable {
	v := store.VariableWithShape(StatePrefix(index)+param.Path()+"/"+kind, param.Shape(), graph.Zeros)
	v.SetTrainable(false)
	return v
}

// Apply adds to the graph the update of params with grads (same order), as
// optimizer number index, and increments its step counter. gates, when not
// nil, is a boolean scalar: false keeps every parameter and state unchanged
// (used to skip non-finite or non-boundary steps).
//
// The learning rate is read from one variable at StatePrefix(index)+"/lr"
// shared by parameters of every dtype: Apply uses it if it exists (say,
// created by LRVariable) and otherwise creates it in float64 if any parameter
// is float64, float32 otherwise.
func (o *Optimizer) Apply(store *model.Store, index int, params []*model.Variable, grads []*graph.Node, gate *graph.Node) {
	o.ApplyWithLRScales(store, index, params, grads, nil, gate)
}

// ApplyWithLRScales is Apply with a learning-rate multiplier per parameter
// (parameter groups): lrScales[i], when lrScales and it are not nil, is a
// scalar node multiplying the learning rate for params[i].
func (o *Optimizer) ApplyWithLRScales(store *model.Store, index int, params []*model.Variable, grads, lrScales []*graph.Node, gate *graph.Node) {
	var opts []ParamOptions
	if lrScales != nil {
		opts = make([]ParamOptions, len(params))
		for i := range opts {
			if i < len(lrScales) {
				opts[i].LRScale = lrScales[i]
			}
		}
	}
	o.ApplyWithOptions(store, index, params, grads, opts, gate)
}

// ParamOptions is what a parameter group changes for one parameter, as a
// PyTorch param_group's "lr" and "weight_decay" do.
type ParamOptions struct {
	// LRScale, when not nil, is a scalar node multiplying the learning rate.
	LRScale *graph.Node
	// WeightDecay, when not nil, replaces the optimizer's WeightDecay (L2
	// for SGD, Adam and RMSProp, decoupled for AdamW).
	WeightDecay *float64
}

// ApplyWithOptions is Apply with per-parameter options (parameter groups):
// opts, when not nil, holds one entry per parameter.
func (o *Optimizer) ApplyWithOptions(store *model.Store, index int, params []*model.Variable, grads []*graph.Node, opts []ParamOptions, gate *graph.Node) {
	if opts != nil && len(opts) != len(params) {
		panic(fmt.Sprintf("optim.Apply: %d parameters but %d parameter options", len(params), len(opts)))
	}
	if len(params) != len(grads) {
		panic(fmt.Sprintf("optim.Apply: %d parameters but %d gradients", len(params), len(grads)))
	}
	if len(params) == 0 {
		panic("optim.Apply: no trainable parameters were used by the training step")
	}
	g := grads[0].Graph()
	stepVar := stepVariable(store, index)
	step := graph.AddScalar(stepVar.NodeValue(g), 1)
	set := func(v *model.Variable, value *graph.Node) {
		if value.DType() != v.DType() {
			value = graph.ConvertDType(value, v.DType())
		}
		if gate != nil {
			value = graph.Where(gate, value, v.NodeValue(g))
		}
		v.SetNodeValue(value)
	}
	// read returns a variable's value in the working dtype.
	read := func(v *model.Variable, dtype dtypes.DType) *graph.Node {
		n := v.NodeValue(g)
		if n.DType() != dtype {
			n = graph.ConvertDType(n, dtype)
		}
		return n
	}
	set(stepVar, step)
	lrVar := o.lrVariableFor(store, index, params)
	for i, p := range params {
		// Half-precision parameters (bf16-true, 16-true) are updated with
		// float32 math, their state stored in their own dtype: eps and the
		// bias corrections would round to zero otherwise.
		dtype := p.DType()
		if dtype == dtypes.BFloat16 || dtype == dtypes.Float16 {
			dtype = dtypes.Float32
		}
		lr := lrVar.NodeValue(g)
		if lr.DType() != dtype {
			lr = graph.ConvertDType(lr, dtype)
		}
		weightDecay := o.WeightDecay
		if opts != nil {
			if opts[i].LRScale != nil {
				lr = graph.Mul(lr, graph.ConvertDType(opts[i].LRScale, dtype))
			}
			if opts[i].WeightDecay != nil {
				weightDecay = *opts[i].WeightDecay
			}
		}
		t := graph.ConvertDType(step, dtype)
		param := read(p, dtype)
		grad := grads[i]
		if grad.DType() != dtype {
			grad = graph.ConvertDType(grad, dtype)
		}
		c := func(x float64) *graph.Node { return graph.ConstAsDType(g, dtype, x) }
		switch o.Kind {
		case KindSGD:
			if weightDecay != 0 {
				grad = graph.Add(grad, graph.Mul(c(weightDecay), param))
			}
			if o.Momentum != 0 {
				bufVar := stateVariable(store, index, p, "momentum_buffer")
				buf := graph.Add(graph.Mul(c(o.Momentum), read(bufVar, dtype)), graph.Mul(c(1-o.Dampening), grad))
				// PyTorch starts the buffer at the first gradient, undampened.
				buf = graph.Where(graph.Equal(t, c(1)), grad, buf)
				set(bufVar, buf)
				if o.Nesterov {
					grad = graph.Add(grad, graph.Mul(c(o.Momentum), buf))
				} else {
					grad = buf
				}
			}
			set(p, graph.Sub(param, graph.Mul(lr, grad)))
		case KindAdam, KindAdamW:
			if o.Kind == KindAdamW {
				if weightDecay != 0 {
					param = graph.Mul(param, graph.Sub(c(1), graph.Mul(lr, c(weightDecay))))
				}
			} else if weightDecay != 0 {
				grad = graph.Add(grad, graph.Mul(c(weightDecay), param))
			}
			b1, b2 := c(o.Betas[0]), c(o.Betas[1])
			mVar := stateVariable(store, index, p, "exp_avg")
			vVar := stateVariable(store, index, p, "exp_avg_sq")
			m := graph.Add(graph.Mul(b1, read(mVar, dtype)), graph.Mul(graph.OneMinus(b1), grad))
			v := graph.Add(graph.Mul(b2, read(vVar, dtype)), graph.Mul(graph.OneMinus(b2), graph.Square(grad)))
			set(mVar, m)
			set(vVar, v)
			biasCorrection1 := graph.OneMinus(graph.Pow(b1, t))
			biasCorrection2Sqrt := graph.Sqrt(graph.OneMinus(graph.Pow(b2, t)))
			stepSize := graph.Div(lr, biasCorrection1)
			denom := graph.Add(graph.Div(graph.Sqrt(v), biasCorrection2Sqrt), c(o.Eps))
			set(p, graph.Sub(param, graph.Mul(stepSize, graph.Div(m, denom))))
		case KindRMSProp:
			if weightDecay != 0 {
				grad = graph.Add(grad, graph.Mul(c(weightDecay), param))
			}
			alpha := c(o.Alpha)
			sqVar := stateVariable(store, index, p, "square_avg")
			sq := graph.Add(graph.Mul(alpha, read(sqVar, dtype)), graph.Mul(graph.OneMinus(alpha), graph.Square(grad)))
			set(sqVar, sq)
			avg := graph.Add(graph.Sqrt(sq), c(o.Eps))
			if o.Momentum > 0 {
				bufVar := stateVariable(store, index, p, "momentum_buffer")
				buf := graph.Add(graph.Mul(c(o.Momentum), read(bufVar, dtype)), graph.Div(grad, avg))
				set(bufVar, buf)
				set(p, graph.Sub(param, graph.Mul(lr, buf)))
			} else {
				set(p, graph.Sub(param, graph.Mul(lr, graph.Div(grad, avg))))
			}
		default:
			panic(fmt.Sprintf("optim: unknown optimizer kind %q", o.Kind))
		}
	}
}
