package main

import (
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
)

// RNN is an Elman recurrent network: h_t = tanh(x_t·Wx + h_{t-1}·Wh + b),
// y_t = h_t·Wy, trained to predict the next value of a sequence.
type RNN struct {
	Hidden int
	LR     float64
}

// unroll runs the cell over the time axis of x [batch, time, 1] from h and
// returns the predictions [batch, time, 1] and the last hidden state.
func (m *RNN) unroll(s *volt.Step, x, h *graph.Node) (*graph.Node, *graph.Node) {
	g := x.Graph()
	batch, steps := x.Shape().Dimensions[0], x.Shape().Dimensions[1]
	if h == nil {
		h = graph.Zeros(g, shapes.Make(x.DType(), batch, m.Hidden))
	}
	cell := s.Scope().In("cell")
	wx := cell.VariableWithShape("wx", shapes.Make(x.DType(), 1, m.Hidden)).NodeValue(g)
	wh := cell.VariableWithShape("wh", shapes.Make(x.DType(), m.Hidden, m.Hidden)).NodeValue(g)
	b := cell.VariableWithShape("b", shapes.Make(x.DType(), m.Hidden)).NodeValue(g)
	var outs []*graph.Node
	for t := range steps {
		xt := graph.Reshape(graph.Slice(x, graph.AxisRange(), graph.AxisElem(t), graph.AxisRange()), batch, 1)
		h = graph.Tanh(graph.Add(graph.Add(graph.MatMul(xt, wx), graph.MatMul(h, wh)), graph.ExpandAxes(b, 0)))
		outs = append(outs, h)
	}
	hs := graph.Stack(outs, 1) // [batch, time, hidden]
	return layers.DenseWithBias(s.Scope().In("readout"), hs, 1), h
}

// TBPTTTrainingStep implements volt.TBPTTStepper: one time split.
func (m *RNN) TBPTTTrainingStep(s *volt.Step, b volt.Batch, hiddens []*graph.Node) (*graph.Node, []*graph.Node) {
	var h *graph.Node
	if len(hiddens) > 0 {
		h = hiddens[0]
	}
	pred, last := m.unroll(s, b.Input(0), h)
	loss := graph.ReduceAllMean(graph.Square(graph.Sub(pred, b.Label(0))))
	s.Log("train_loss", loss, volt.ProgBar)
	return loss, []*graph.Node{last}
}

// TrainingStep implements volt.Module: the whole sequence at once.
func (m *RNN) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	loss, _ := m.TBPTTTrainingStep(s, b, nil)
	return loss
}

// ValidationStep implements volt.ValidationStepper on whole sequences.
func (m *RNN) ValidationStep(s *volt.Step, b volt.Batch) {
	pred, _ := m.unroll(s, b.Input(0), nil)
	s.Log("val_loss", graph.ReduceAllMean(graph.Square(graph.Sub(pred, b.Label(0)))), volt.ProgBar)
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *RNN) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(m.LR)) }
