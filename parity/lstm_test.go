package parity_test

import (
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/lstm"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
	"github.com/voltml/volt/parity"
)

// rnn is tools/parity/lstm.py's regressor: an LSTM of 16 over the
// sequence, its last hidden state into a dense layer.
type rnn struct{ weights *parity.Tensors }

func (m *rnn) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	scope := s.Scope().In("rnn")
	defer m.weights.Apply(scope)
	_, last, _ := lstm.New(scope.In("lstm"), b.Input(0), 16).Done()
	pred := layers.DenseWithBias(scope.In("head"), graph.Squeeze(last, 0), 1)
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
}

func (m *rnn) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(1e-2)) }

// TestLSTMParity: GoMLX's LSTM from PyTorch's weights (torch_parity.lstm's
// gate reordering) trains 50 steps with Adam and clipping with PyTorch's
// loss at every step (1e-4 relative).
func TestLSTMParity(t *testing.T) {
	c := readCase(t, "lstm_adam", "lstm.py")
	c.check(t, volt.Config{GradientClipVal: 1}, &rnn{weights: c.file})
}
