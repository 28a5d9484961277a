package digits

import (
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
)

// CNN classifies 28×28 digits: two 3×3 convolutions (32 and 64 channels),
// each followed by ReLU and 2×2 max-pooling, then dense 128 and dense 10.
type CNN struct {
	LR float64 // Adam learning rate
}

// Logits implements LogitsFn.
func (m *CNN) Logits(s *volt.Step, images *graph.Node) *graph.Node {
	x := graph.Reshape(images, images.Shape().Dimensions[0], 28, 28, 1) // channels last
	for i, channels := range []int{32, 64} {
		x = layers.Convolution(s.Scope().In("conv_%d", i), x).Channels(channels).KernelSize(3).Done()
		x = graph.MaxPool(activation.Relu(x)).Window(2).Done()
	}
	x = graph.Reshape(x, x.Shape().Dimensions[0], -1)
	x = activation.Relu(layers.DenseWithBias(s.Scope().In("dense_0"), x, 128))
	return layers.DenseWithBias(s.Scope().In("dense_1"), x, 10)
}

// TrainingStep implements volt.Module.
func (m *CNN) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return TrainingStep(s, b, m.Logits)
}

// ValidationStep implements volt.ValidationStepper.
func (m *CNN) ValidationStep(s *volt.Step, b volt.Batch) { ValidationStep(s, b, m.Logits) }

// TestStep implements volt.TestStepper.
func (m *CNN) TestStep(s *volt.Step, b volt.Batch) { TestStep(s, b, m.Logits) }

// PredictStep implements volt.PredictStepper: the predicted class.
func (m *CNN) PredictStep(s *volt.Step, b volt.Batch) *graph.Node { return PredictStep(s, b, m.Logits) }

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *CNN) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(m.LR)) }
