package parity_test

import (
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/lstm"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/nn"
	"github.com/voltml/volt/optim"
	"github.com/voltml/volt/parity"
)

// rnn is tools/parity/lstm.py's regressor: an LSTM of 16 over the
// sequence (GoMLX's layers/lstm, or nn.LSTM when volt is set), its last
// hidden state into a dense layer.
type rnn struct {
	weights *parity.Tensors
	volt    bool
}

func (m *rnn) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	scope := s.Scope().In("rnn")
	defer m.weights.Apply(scope)
	var last *graph.Node
	if m.volt {
		_, last, _ = nn.LSTM(scope.In("lstm"), b.Input(0), 16)
	} else {
		_, last, _ = lstm.New(scope.In("lstm"), b.Input(0), 16).Done()
		last = graph.Squeeze(last, 0)
	}
	pred := layers.DenseWithBias(scope.In("head"), last, 1)
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
}

func (m *rnn) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(1e-2)) }

// TestLSTMParity: GoMLX's LSTM and nn.LSTM, each from PyTorch's weights
// (torch_parity.lstm's gate reordering), train 50 steps with Adam and
// clipping with PyTorch's loss at every step (1e-4 relative).
func TestLSTMParity(t *testing.T) {
	c := readCase(t, "lstm_adam", "lstm.py")
	for _, layer := range []struct {
		name string
		volt bool
	}{{"layers/lstm", false}, {"nn.LSTM", true}} {
		t.Run(layer.name, func(t *testing.T) {
			c.check(t, volt.Config{GradientClipVal: 1}, &rnn{weights: c.file, volt: layer.volt})
		})
	}
}
