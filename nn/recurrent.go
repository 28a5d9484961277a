package nn

import (
	"fmt"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/torchinit"
)

// What nn.LSTM and nn.GRU share: their argument checks, their variables,
// and the step's input and gate columns.

// checkSequence panics, naming layer, unless x is [batch, time, features]
// with at least one step and hidden is positive.
func checkSequence(layer string, x *graph.Node, hidden int) {
	if x.Rank() != 3 || x.Shape().Dim(1) < 1 {
		panic(fmt.Sprintf("%s: x must be [batch, time, features] with at least one step, got shape %s", layer, x.Shape()))
	}
	if hidden < 1 {
		panic(fmt.Sprintf("%s: hidden must be positive, got %d", layer, hidden))
	}
}

// torchVariable returns scope's variable name, with torchinit's rule for
// it as its initialiser where it has no value yet.
func torchVariable(scope *model.Scope, name string, shape shapes.Shape) *model.Variable {
	return initialiseAsTorch(scope.Store(), scope.VariableWithShape(name, shape))
}

// initialiseAsTorch gives v torchinit's rule for it as its initialiser
// when it has no value yet and torchinit knows its name; it returns the
// store's variable.
func initialiseAsTorch(store *model.Store, v *model.Variable) *model.Variable {
	if v == nil || v.HasValue() {
		return v // already initialised: a second trace, or loaded weights
	}
	if rule, ok := torchinit.RuleFor(store, v); ok {
		return store.VariableWithShape(v.Path(), v.Shape(), torchinit.Initializer(store, rule))
	}
	return v
}

// byStep is x [batch, time, features] as [time, batch, features], so that
// each step's input is one leading slice (stepInput): the smallest tensor
// spanning the sequence, whose zero-padded slice gradients are all a
// per-step slicing costs in GoMLX's backward pass.
func byStep(x *graph.Node) *graph.Node { return graph.TransposeAllAxes(x, 1, 0, 2) }

// stepInput is step t's input [batch, features] of steps = byStep(x).
func stepInput(steps *graph.Node, t int) *graph.Node {
	dims := steps.Shape().Dimensions
	return graph.Reshape(graph.Slice(steps, graph.AxisElem(t)), dims[1], dims[2])
}

// gate returns columns [n·width, (n+1)·width) of z [batch, k·width].
func gate(z *graph.Node, n, width int) *graph.Node {
	return graph.Slice(z, graph.AxisRange(), graph.AxisRange(n*width, (n+1)*width))
}
