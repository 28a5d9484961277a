package nn

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/torchinit"
)

// GRU is torch.nn.GRU(features, hidden, batch_first=True), one layer, one
// direction, over x [batch, time, features]. It returns PyTorch's outputs:
// every step's hidden state [batch, time, hidden] and the last one
// [batch, hidden] (h_n[0]). The state starts at zero. Each step is
// PyTorch's
//
//	r = σ(W_ir x + b_ir + W_hr h + b_hr)
//	z = σ(W_iz x + b_iz + W_hz h + b_hz)
//	n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
//	h' = (1 − z) ⊙ n + z ⊙ h
//
// Its variables, in scope itself, are PyTorch's under PyTorch's names
// without the layer suffix and in its layout, gates in the order r, z, n:
// weight_ih [3·hidden, features], weight_hh [3·hidden, hidden], bias_ih
// and bias_hh [3·hidden]; a GRU's state dict maps onto them as it is.
// Where they have no value yet they are U(±1/√hidden), PyTorch's
// initialisation. Like [LSTM], each step slices only its input out of x.
func GRU(scope *model.Scope, x *graph.Node, hidden int) (outputs, last *graph.Node) {
	if x.Rank() != 3 || x.Shape().Dim(1) < 1 {
		panic(fmt.Sprintf("nn.GRU: x must be [batch, time, features] with at least one step, got shape %s", x.Shape()))
	}
	if hidden < 1 {
		panic(fmt.Sprintf("nn.GRU: hidden must be positive, got %d", hidden))
	}
	g := x.Graph()
	dtype := x.DType()
	batch, steps, features := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	variable := func(name string, dims ...int) *graph.Node {
		v := scope.VariableWithShape(name, shapes.Make(dtype, dims...))
		if !v.HasValue() {
			rule := torchinit.Rule{Path: v.Path(), Dist: "uniform", Bound: 1 / math.Sqrt(float64(hidden)),
				Why: "nn.GRU " + name + ": bound 1/√hidden_size"}
			v = scope.Store().VariableWithShape(v.Path(), v.Shape(), torchinit.Initializer(scope.Store(), rule))
		}
		return v.NodeValue(g)
	}
	weightIH, weightHH := variable("weight_ih", 3*hidden, features), variable("weight_hh", 3*hidden, hidden)
	biasIH := graph.Reshape(variable("bias_ih", 3*hidden), 1, 3*hidden)
	biasHH := graph.Reshape(variable("bias_hh", 3*hidden), 1, 3*hidden)
	gate := func(v *graph.Node, n int) *graph.Node {
		return graph.Slice(v, graph.AxisRange(), graph.AxisRange(n*hidden, (n+1)*hidden))
	}
	byStep := graph.TransposeAllAxes(x, 1, 0, 2) // [time, batch, features]
	h := graph.Zeros(g, shapes.Make(dtype, batch, hidden))
	hiddens := make([]*graph.Node, steps)
	for t := range steps {
		input := graph.Reshape(graph.Slice(byStep, graph.AxisElem(t)), batch, features)
		gi := graph.Add(graph.DotGeneral(input, []int{1}, nil, weightIH, []int{1}, nil), biasIH) // [batch, 3·hidden]
		gh := graph.Add(graph.DotGeneral(h, []int{1}, nil, weightHH, []int{1}, nil), biasHH)
		r := graph.Sigmoid(graph.Add(gate(gi, 0), gate(gh, 0)))
		z := graph.Sigmoid(graph.Add(gate(gi, 1), gate(gh, 1)))
		n := graph.Tanh(graph.Add(gate(gi, 2), graph.Mul(r, gate(gh, 2))))
		h = graph.Add(n, graph.Mul(z, graph.Sub(h, n))) // (1 − z)·n + z·h
		hiddens[t] = h
	}
	return graph.Stack(hiddens, 1), h
}
