package nn

import (
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
)

// LSTM is torch.nn.LSTM(features, hidden, batch_first=True), one layer, one
// direction, over x [batch, time, features]. It returns PyTorch's outputs:
// every step's hidden state [batch, time, hidden], and the last hidden and
// cell states [batch, hidden] (h_n[0] and c_n[0]). The states start at zero.
//
// Its variables are GoMLX's layers/lstm's, in scope itself, with the same
// names, shapes and gate order (input, output, forget, cell): inputsW
// [1, 4, hidden, features], recurrentW [1, 4, hidden, hidden] and biasesW
// [1, 8, hidden] (the 4 input biases, then the 4 recurrent ones). So
// checkpoints, torchinit's rules and tools/parity/torch_parity.py's LSTM
// converter serve both, and an lstm.New(scope, x, hidden).Done() can be
// replaced by it. Its initial values are PyTorch's, U(±1/√hidden) (package
// torchinit), where the variables have none yet.
//
// It computes what layers/lstm computes (to rounding), with far less work
// in the backward pass. layers/lstm slices every step's gate inputs out of
// one projection of the whole sequence, [4, batch, time, hidden]; GoMLX's
// gradient of a slice is the slice's gradient padded with zeros to the
// whole operand, so its backward pass fills and adds 4·time tensors of the
// projection's size, 16·batch·hidden·time² values (on the pure-Go backend,
// 60% of examples/seqclass's step at 32 tokens). LSTM slices each step's
// input out of x [time, batch, features] instead, the smallest tensor that
// spans the sequence, and multiplies it and the previous hidden state,
// concatenated, by both weight matrices at once: one product per step,
// and batch·features·time² padded values, 16·hidden/features times fewer.
// Both grow with the square of the sequence length: GoMLX's gradients of
// per-step slices are whole-sequence tensors whatever the layer does.
func LSTM(scope *model.Scope, x *graph.Node, hidden int) (outputs, lastHidden, lastCell *graph.Node) {
	checkSequence("nn.LSTM", x, hidden)
	g, dtype := x.Graph(), x.DType()
	batch, steps, features := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	inputsW := torchVariable(scope, "inputsW", shapes.Make(dtype, 1, 4, hidden, features)).NodeValue(g)
	recurrentW := torchVariable(scope, "recurrentW", shapes.Make(dtype, 1, 4, hidden, hidden)).NodeValue(g)
	biasesW := torchVariable(scope, "biasesW", shapes.Make(dtype, 1, 8, hidden)).NodeValue(g)

	// weights [4·hidden, features+hidden]: row n·hidden+j holds gate n's
	// unit j, for the step's input and previous hidden state together.
	weights := graph.Reshape(graph.Concatenate([]*graph.Node{inputsW, recurrentW}, -1), 4*hidden, features+hidden)
	biases := graph.Reshape(biasesW, 2, 4*hidden)
	bias := graph.Add(graph.Slice(biases, graph.AxisElem(0)), graph.Slice(biases, graph.AxisElem(1))) // [1, 4·hidden]

	inputs := byStep(x)
	h := graph.Zeros(g, shapes.Make(dtype, batch, hidden))
	c := h
	hiddens := make([]*graph.Node, steps)
	for t := range steps {
		z := graph.DotGeneral(graph.Concatenate([]*graph.Node{stepInput(inputs, t), h}, -1), []int{1}, nil, weights, []int{1}, nil)
		z = graph.Add(z, bias) // [batch, 4·hidden]
		in, out, forget := graph.Sigmoid(gate(z, 0, hidden)), graph.Sigmoid(gate(z, 1, hidden)), graph.Sigmoid(gate(z, 2, hidden))
		c = graph.Add(graph.Mul(c, forget), graph.Mul(graph.Tanh(gate(z, 3, hidden)), in))
		h = graph.Mul(out, graph.Tanh(c))
		hiddens[t] = h
	}
	return graph.Stack(hiddens, 1), h, c
}
