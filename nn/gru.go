package nn

import (
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
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
// initialisation (package torchinit's rule for these names). Like [LSTM],
// each step slices only its input out of x.
func GRU(scope *model.Scope, x *graph.Node, hidden int) (outputs, last *graph.Node) {
	checkSequence("nn.GRU", x, hidden)
	g, dtype := x.Graph(), x.DType()
	batch, steps, features := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	variable := func(name string, dims ...int) *graph.Node {
		return torchVariable(scope, name, shapes.Make(dtype, dims...)).NodeValue(g)
	}
	weightIH, weightHH := variable("weight_ih", 3*hidden, features), variable("weight_hh", 3*hidden, hidden)
	biasIH := graph.Reshape(variable("bias_ih", 3*hidden), 1, 3*hidden)
	biasHH := graph.Reshape(variable("bias_hh", 3*hidden), 1, 3*hidden)

	inputs := byStep(x)
	h := graph.Zeros(g, shapes.Make(dtype, batch, hidden))
	hiddens := make([]*graph.Node, steps)
	for t := range steps {
		gi := graph.Add(graph.DotGeneral(stepInput(inputs, t), []int{1}, nil, weightIH, []int{1}, nil), biasIH) // [batch, 3·hidden]
		gh := graph.Add(graph.DotGeneral(h, []int{1}, nil, weightHH, []int{1}, nil), biasHH)
		r := graph.Sigmoid(graph.Add(gate(gi, 0, hidden), gate(gh, 0, hidden)))
		z := graph.Sigmoid(graph.Add(gate(gi, 1, hidden), gate(gh, 1, hidden)))
		n := graph.Tanh(graph.Add(gate(gi, 2, hidden), graph.Mul(r, gate(gh, 2, hidden))))
		h = graph.Add(n, graph.Mul(z, graph.Sub(h, n))) // (1 − z)·n + z·h
		hiddens[t] = h
	}
	return graph.Stack(hiddens, 1), h
}
