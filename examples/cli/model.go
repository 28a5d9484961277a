package main

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
)

// MLP classifies 28×28 digits with ReLU hidden layers: the model of
// examples/mnist, its fields set from the config's model section.
type MLP struct {
	Hidden []int   `help:"hidden layer widths"`
	LR     float64 `help:"Adam learning rate"`
}

// newMLP returns the model with its defaults: two hidden layers of 256,
// learning rate 1e-3.
func newMLP() *MLP { return &MLP{Hidden: []int{256, 256}, LR: 1e-3} }

// Validate checks the fields after the config is read.
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

// logits returns the [batch, 10] class scores of flattened images.
func (m *MLP) logits(s *volt.Step, images *graph.Node) *graph.Node {
	x := images
	for i, width := range m.Hidden {
		x = activation.Relu(layers.DenseWithBias(s.Scope().In("hidden_%d", i), x, width))
	}
	return layers.DenseWithBias(s.Scope().In("output"), x, 10)
}

// lossAndAccuracy returns the mean cross-entropy and the accuracy of a batch.
func (m *MLP) lossAndAccuracy(s *volt.Step, b volt.Batch) (*graph.Node, *graph.Node) {
	logits := m.logits(s, b.Input(0))
	labels := graph.ConvertDType(b.Label(0), dtypes.Int32)
	l := loss.SparseCategoricalCrossEntropyLogits([]*graph.Node{graph.ExpandAxes(labels, -1)}, []*graph.Node{logits})
	correct := graph.Equal(graph.ArgMax(logits, -1, dtypes.Int32), labels)
	acc := graph.ReduceAllMean(graph.ConvertDType(correct, logits.DType()))
	return l, acc
}

// TrainingStep implements volt.Module.
func (m *MLP) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l, acc := m.lossAndAccuracy(s, b)
	s.Log("train_loss", l, volt.ProgBar)
	s.Log("train_acc", acc, volt.OnEpoch(true))
	return l
}

// ValidationStep implements volt.ValidationStepper.
func (m *MLP) ValidationStep(s *volt.Step, b volt.Batch) {
	l, acc := m.lossAndAccuracy(s, b)
	s.Log("val_loss", l, volt.ProgBar)
	s.Log("val_acc", acc, volt.ProgBar)
}

// TestStep implements volt.TestStepper.
func (m *MLP) TestStep(s *volt.Step, b volt.Batch) {
	l, acc := m.lossAndAccuracy(s, b)
	s.Log("test_loss", l)
	s.Log("test_acc", acc)
}

// PredictStep implements volt.PredictStepper: the predicted class.
func (m *MLP) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return graph.ArgMax(m.logits(s, b.Input(0)), -1, dtypes.Int32)
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *MLP) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(m.LR)) }

// HParams implements volt.HParamser: recorded in hparams.yaml.
func (m *MLP) HParams() map[string]any { return map[string]any{"hidden": m.Hidden, "lr": m.LR} }
