package engine

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
)

// Forward is what the module's part of a training step traced: the loss,
// the outputs that come first (the loss and the logged values, say) and
// those that come after the update's (recurrent hidden states, say).
// Outputs is called after Backward, so that values its hooks add count.
type Forward struct {
	Loss     *graph.Node
	Outputs  func() []*graph.Node
	Trailing []*graph.Node
	// Extra, when set, is added to the loss that Backward differentiates
	// (UpdateSpec.Extra): a synchronised batch normalization's surrogate.
	Extra *graph.Node
}

// ForwardFn traces the module's part of a training step.
type ForwardFn func(scope *model.Scope, inputs, labels []*graph.Node) Forward

// UpdateFn returns the update of a step traced in graph g (its trace-time
// hooks bound to g).
type UpdateFn func(g *graph.Graph) *UpdateSpec

// Reducer runs on the host between the gradient and the apply programs of a
// split step, where a data-parallel step all-reduces the gradients.
type Reducer struct {
	// Sum gets one tensor per gradient, in UpdateSpec.Vars order, and
	// returns tensors of the same shapes holding their sums over Ranks
	// ranks (it may change them in place and return them).
	Sum func(grads []*tensors.Tensor) ([]*tensors.Tensor, error)
	// Ranks is how many ranks Sum adds up. The gradient program divides
	// each rank's gradients by it (Backward, UpdateSpec.Ranks), as
	// PyTorch's DDP divides them by the world size before its all-reduce,
	// so that the sum is the mean without another pass over them.
	Ranks int
}

// TrainStep is a compiled training step: forward, Backward and Apply in one
// program, or, with a Reducer, split into a gradient program and an apply
// program with the Reducer between them. Both forms return the same
// outputs: [Forward.Outputs…, the update's outputs…, Forward.Trailing…].
type TrainStep struct {
	name   string
	mode   Accumulation
	update UpdateFn
	reduce *Reducer

	whole        *Program // the fused step, when not split
	grads, apply *Program // the split step
	// per traced graph: the update's outputs, and for the gradient program
	// how many trailing outputs and gradients follow the first outputs.
	traces map[graph.GraphId]UpdateTrace
	// hosts holds the host update of each fused graph whose optimizer
	// step runs on the host (hostupdate.go); its gradients are the
	// graph's last outputs.
	hosts    map[graph.GraphId]*hostUpdate
	trailing map[graph.GraphId]int
	numGrads map[graph.GraphId]int
	vars     []*model.Variable // the variables of the last gradient trace
	batch    data.Batch
	// Profile, when set, times the three parts of a split step, named
	// ActionGradients, ActionAllReduce and ActionApply.
	Profile func(action string) (stop func())
}

// The parts of a split step, as TrainStep.Profile names them.
const (
	ActionGradients = "gradient_step"
	ActionAllReduce = "all_reduce"
	ActionApply     = "optimizer_step"
)

// timed starts action when the step is profiled; nil when it is not.
func (ts *TrainStep) timed(action string) func() {
	if ts.Profile == nil {
		return func() {}
	}
	return ts.Profile(action)
}

// CompileTrainStep compiles a training step of the given accumulation mode.
// reduce nil gives one fused program.
func (e *Engine) CompileTrainStep(name string, mode Accumulation, forward ForwardFn, update UpdateFn, reduce *Reducer) (*TrainStep, error) {
	ts := &TrainStep{name: name, mode: mode, update: update, reduce: reduce,
		traces: map[graph.GraphId]UpdateTrace{}, hosts: map[graph.GraphId]*hostUpdate{}, trailing: map[graph.GraphId]int{}, numGrads: map[graph.GraphId]int{}}
	var err error
	if reduce == nil {
		ts.whole, err = e.Compile(name, Training, func(scope *model.Scope, inputs, labels []*graph.Node) []*graph.Node {
			f := forward(scope, inputs, labels)
			g := f.Loss.Graph()
			spec := ts.spec(g)
			spec.Extra = f.Extra
			grads := Backward(e.Store, f.Loss, spec)
			outs := f.Outputs()
			var hostGrads []*graph.Node
			if grads != nil {
				var updateOuts []*graph.Node
				var trace UpdateTrace
				if host := e.planHostUpdate(g, grads, spec); host != nil {
					updateOuts, trace = Prepare(grads, spec)
					hostGrads = Values(grads)
					ts.hosts[g.GraphId()] = host
				} else {
					updateOuts, trace = Apply(e.Store, g, grads, spec)
				}
				ts.traces[g.GraphId()] = trace
				outs = append(outs, updateOuts...)
			}
			return append(append(outs, f.Trailing...), hostGrads...)
		})
		return ts, err
	}
	ts.grads, err = e.Compile(name+"[gradients]", Training, func(scope *model.Scope, inputs, labels []*graph.Node) []*graph.Node {
		f := forward(scope, inputs, labels)
		g := f.Loss.Graph()
		spec := ts.spec(g)
		spec.Extra = f.Extra
		grads := Backward(e.Store, f.Loss, spec)
		ts.vars = ts.vars[:0]
		for _, gr := range grads {
			ts.vars = append(ts.vars, gr.Variable)
		}
		ts.trailing[g.GraphId()], ts.numGrads[g.GraphId()] = len(f.Trailing), len(grads)
		return append(append(f.Outputs(), f.Trailing...), Values(grads)...)
	})
	if err != nil {
		return nil, err
	}
	ts.apply, err = e.Compile(name+"[apply]", Training, func(scope *model.Scope, inputs, _ []*graph.Node) []*graph.Node {
		g := inputs[0].Graph()
		grads := make([]Gradient, len(inputs))
		for i, in := range inputs {
			grads[i] = Gradient{Variable: ts.vars[i], Value: in}
		}
		outs, trace := Apply(e.Store, g, grads, ts.spec(g))
		ts.traces[g.GraphId()] = trace
		return outs
	})
	if err != nil {
		return nil, err
	}
	ts.apply.rawInputs = true // gradients keep their dtype (float32 masters)
	return ts, nil
}

// spec returns the update for graph g in the step's mode.
func (ts *TrainStep) spec(g *graph.Graph) *UpdateSpec {
	spec := ts.update(g)
	spec.Accumulation = ts.mode
	if ts.reduce != nil {
		spec.Ranks = ts.reduce.Ranks
	}
	return spec
}

// SetCarry makes the step carry c (Program.SetCarry): the fused program,
// or the gradient program of a split step, where the forward pass is.
func (ts *TrainStep) SetCarry(c *Carry) {
	if ts.whole != nil {
		ts.whole.SetCarry(c)
		return
	}
	ts.grads.SetCarry(c)
}

// SetRawTail makes the next runs feed the last n inputs of the batch as
// they are (Program.SetRawTail): the gradient program's, or the fused one's.
func (ts *TrainStep) SetRawTail(n int) {
	if ts.whole != nil {
		ts.whole.SetRawTail(n)
		return
	}
	ts.grads.SetRawTail(n)
}

// Split reports whether the step runs as two programs.
func (ts *TrainStep) Split() bool { return ts.reduce != nil }

// Compile traces and compiles the step (its gradient program, when split)
// for b's shapes without running it.
func (ts *TrainStep) Compile(b *data.Batch) error {
	if ts.whole != nil {
		return ts.whole.Compile(b)
	}
	return ts.grads.Compile(b)
}

// Run executes the step on b and returns its outputs, the id of the graph
// that ran the forward pass and what the update's outputs mean.
func (ts *TrainStep) Run(b *data.Batch) ([]*tensors.Tensor, graph.GraphId, UpdateTrace, error) {
	if ts.whole != nil {
		outs, gid, err := ts.whole.Run(b)
		if err != nil {
			return nil, 0, UpdateTrace{}, err
		}
		if host := ts.hosts[gid]; host != nil {
			first := len(outs) - len(host.params)
			if err := host.run(ts.whole.engine, outs[first:]); err != nil {
				return nil, 0, UpdateTrace{}, fmt.Errorf("%s: %w", ts.name, err)
			}
			outs = outs[:first]
		}
		return outs, gid, ts.traces[gid], nil
	}
	stop := ts.timed(ActionGradients)
	outs, gid, err := ts.grads.Run(b)
	stop()
	if err != nil {
		return nil, 0, UpdateTrace{}, err
	}
	n, trailing := ts.numGrads[gid], ts.trailing[gid]
	if n == 0 {
		return outs, gid, UpdateTrace{}, nil // accumulating: nothing to apply
	}
	first := len(outs) - n - trailing
	stop = ts.timed(ActionAllReduce)
	grads, err := ts.reduce.Sum(outs[first+trailing:])
	stop()
	if err != nil {
		return nil, 0, UpdateTrace{}, fmt.Errorf("%s: reducing the gradients: %w", ts.name, err)
	}
	if len(grads) != n {
		return nil, 0, UpdateTrace{}, fmt.Errorf("%s: the gradient reducer returned %d tensors for %d gradients", ts.name, len(grads), n)
	}
	ts.batch.Inputs = grads
	stop = ts.timed(ActionApply)
	updateOuts, applyID, err := ts.apply.Run(&ts.batch)
	stop()
	if err != nil {
		return nil, 0, UpdateTrace{}, err
	}
	result := make([]*tensors.Tensor, 0, first+len(updateOuts)+trailing)
	result = append(append(append(result, outs[:first]...), updateOuts...), outs[first:first+trailing]...)
	return result, gid, ts.traces[applyID], nil
}
