package parity_test

import (
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/lstm"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/nn"
	"github.com/voltml/volt/optim"
	"github.com/voltml/volt/parity"
)

// recurrentLayers are the layers tools/parity/lstm.py's regressor is
// trained with: each returns the last hidden state [batch, 16] of x, its
// variables under scope's sub-scope of the case file.
var recurrentLayers = map[string]func(scope *model.Scope, x *graph.Node) *graph.Node{
	"layers/lstm": func(scope *model.Scope, x *graph.Node) *graph.Node {
		_, last, _ := lstm.New(scope.In("lstm"), x, 16).Done()
		return graph.Squeeze(last, 0)
	},
	"nn.LSTM": func(scope *model.Scope, x *graph.Node) *graph.Node {
		_, last, _ := nn.LSTM(scope.In("lstm"), x, 16)
		return last
	},
	"nn.GRU": func(scope *model.Scope, x *graph.Node) *graph.Node {
		_, last := nn.GRU(scope.In("gru"), x, 16)
		return last
	},
}

// rnn is tools/parity/lstm.py's regressor: a recurrent layer of 16 over
// the sequence, its last hidden state into a dense layer.
type rnn struct {
	weights *parity.Tensors
	layer   string // a key of recurrentLayers
}

func (m *rnn) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	scope := s.Scope().In("rnn")
	defer m.weights.Apply(scope)
	pred := layers.DenseWithBias(scope.In("head"), recurrentLayers[m.layer](scope, b.Input(0)), 1)
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
}

func (m *rnn) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(1e-2)) }

// checkRecurrent trains the regressor with each layer from the case's
// PyTorch weights 50 steps with Adam and clipping by norm: PyTorch's loss
// at every step (1e-4 relative) and its weights after.
func checkRecurrent(t *testing.T, caseName string, layerNames ...string) {
	c := readCase(t, caseName, "lstm.py")
	for _, name := range layerNames {
		t.Run(name, func(t *testing.T) {
			c.check(t, volt.Config{GradientClipVal: 1}, &rnn{weights: c.file, layer: name})
		})
	}
}

// TestLSTMParity: GoMLX's LSTM and nn.LSTM, each from PyTorch's weights
// (torch_parity.lstm's gate reordering), against PyTorch's nn.LSTM.
func TestLSTMParity(t *testing.T) { checkRecurrent(t, "lstm_adam", "layers/lstm", "nn.LSTM") }

// TestGRUParity: nn.GRU from PyTorch's weights (its state dict's tensors
// as they are) against PyTorch's nn.GRU.
func TestGRUParity(t *testing.T) { checkRecurrent(t, "gru_adam", "nn.GRU") }
