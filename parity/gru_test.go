package parity_test

import (
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/nn"
	"github.com/voltml/volt/optim"
	"github.com/voltml/volt/parity"
)

// gruRegressor is tools/parity/lstm.py's GRU regressor: nn.GRU of 16 over the
// sequence, its last hidden state into a dense layer.
type gruRegressor struct{ weights *parity.Tensors }

func (m *gruRegressor) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	scope := s.Scope().In("rnn")
	defer m.weights.Apply(scope)
	_, last := nn.GRU(scope.In("gru"), b.Input(0), 16)
	pred := layers.DenseWithBias(scope.In("head"), last, 1)
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
}

func (m *gruRegressor) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(1e-2)) }

// TestGRUParity: nn.GRU from PyTorch's weights (its state dict's tensors
// as they are) trains 50 steps with Adam and clipping by norm with
// PyTorch's loss at every step (1e-4 relative) and its weights after.
func TestGRUParity(t *testing.T) {
	c := readCase(t, "gru_adam", "lstm.py")
	c.check(t, volt.Config{GradientClipVal: 1, GradientClipAlgorithm: volt.ClipNorm}, &gruRegressor{weights: c.file})
}
