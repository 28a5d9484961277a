package digits

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
)

// MLP classifies 28×28 digits with ReLU hidden layers.
type MLP struct {
	Hidden []int   `help:"hidden layer widths"`
	LR     float64 `help:"Adam learning rate"`
}

// NewMLP returns the examples' MLP: two hidden layers of 256, Adam 1e-3.
func NewMLP() *MLP { return &MLP{Hidden: []int{256, 256}, LR: 1e-3} }

// Validate checks the fields (the CLI calls it after reading a config).
func (m *MLP) Validate() error {
	for _, w := range m.Hidden {
		if w < 1 {
			return fmt.Errorf("hidden: widths must be >= 1, got %v", m.Hidden)
		}
	}
	if m.LR <= 0 {
		return fmt.Errorf("lr: must be > 0, got %v", m.LR)
	}
	return nil
}

// Logits implements LogitsFn.
func (m *MLP) Logits(s *volt.Step, images *graph.Node) *graph.Node {
	x := images
	for i, width := range m.Hidden {
		x = activation.Relu(layers.DenseWithBias(s.Scope().In("hidden_%d", i), x, width))
	}
	return layers.DenseWithBias(s.Scope().In("output"), x, 10)
}

// TrainingStep implements volt.Module.
func (m *MLP) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return TrainingStep(s, b, m.Logits)
}

// ValidationStep implements volt.ValidationStepper.
func (m *MLP) ValidationStep(s *volt.Step, b volt.Batch) { ValidationStep(s, b, m.Logits) }

// TestStep implements volt.TestStepper.
func (m *MLP) TestStep(s *volt.Step, b volt.Batch) { TestStep(s, b, m.Logits) }

// PredictStep implements volt.PredictStepper: the predicted class.
func (m *MLP) PredictStep(s *volt.Step, b volt.Batch) *graph.Node { return PredictStep(s, b, m.Logits) }

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *MLP) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(m.LR)) }

// HParams implements volt.HParamser: recorded in hparams.yaml.
func (m *MLP) HParams() map[string]any { return map[string]any{"hidden": m.Hidden, "lr": m.LR} }
