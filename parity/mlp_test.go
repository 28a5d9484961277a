package parity_test

import (
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
	"github.com/voltml/volt/parity"
)

// mlp is tools/parity/mlp.py's MLP: 8-64-64-1 with ReLU, its weights
// loaded from the case file.
type mlp struct {
	weights    *parity.Tensors
	optimizers volt.Optimizers
}

func (m *mlp) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	scope := s.Scope().In("mlp")
	defer m.weights.Apply(scope)
	x := b.Input(0)
	for i, width := range []int{64, 64, 1} {
		x = layers.DenseWithBias(scope.In("layer_%d", i), x, width)
		if i < 2 {
			x = activation.Relu(x)
		}
	}
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{x})
}

func (m *mlp) ConfigureOptimizers() volt.Optimizers { return m.optimizers }

// mlpCases are tools/parity/mlp.py's cases, configured as there.
var mlpCases = []struct {
	name string
	clip float64
	opts func() volt.Optimizers
	// trained is how far the weights after training may be from PyTorch's
	// (compareTrained).
	trained float64
}{
	{"mlp_adam", 1.0, func() volt.Optimizers {
		return volt.Optimizers{{Optimizer: optim.Adam(1e-2), Scheduler: optim.NewStepLR(10, 0.5), Interval: volt.IntervalStep}}
	}, trainedRel},
	{"mlp_adamw_groups", 0.5, func() volt.Optimizers {
		return volt.Optimizers{{Optimizer: optim.AdamW(1e-2).WithWeightDecay(0.1), Groups: []volt.ParamGroup{volt.NoWeightDecay("biases")},
			Scheduler: optim.NewCosineAnnealingLR(50, 0), Interval: volt.IntervalStep}}
		// Weight [34, 57] of layer 1 gets no gradient for 14 steps (its
		// ReLU input is dead), then one of -4e-8, rounding's size, which
		// Adam turns into a step of 0.8·lr (eps 1e-8 is the same size):
		// volt ends 2.75e-5 from PyTorch there (2.75e-3 of the 1e-2 floor),
		// every other weight within 5e-4.
	}, 1e-2},
}

// TestMLPParity trains the MLP 50 steps from PyTorch's initial weights on
// PyTorch's batches, with the same optimizer, gradient clipping and
// per-step schedule, and compares the loss at every step with PyTorch's
// (float32, 1e-4 relative) and the weights after the 50 steps with
// PyTorch's (compareTrained).
func TestMLPParity(t *testing.T) {
	for _, tc := range mlpCases {
		t.Run(tc.name, func(t *testing.T) {
			c := readCase(t, tc.name, "mlp.py")
			m := &mlp{weights: c.file, optimizers: tc.opts()}
			tr, losses := c.fit(t, volt.Config{GradientClipVal: tc.clip, GradientClipAlgorithm: volt.ClipNorm}, m, nil)
			c.compare(t, losses)
			c.compareTrained(t, tr, tc.trained)
		})
	}
}
