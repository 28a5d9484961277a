package digits

import (
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
)

// CNN classifies 28×28 digits: two 3×3 convolutions (32 and 64 channels),
// each followed by ReLU and 2×2 max-pooling, then dense 128 and dense 10.
//
// Its variables sit at the root of the step's scope: /conv_0/conv/weights,
// /conv_1/conv/biases, /dense_0/dense/weights, /dense_1/dense/biases.
type CNN struct {
	LR float64 // Adam learning rate
	// Init, if set, is deferred at the end of building the layers (e.g.
	// parity.Tensors.Apply, to start from PyTorch's weights); nil keeps
	// GoMLX's initializers.
	Init func(scope *model.Scope)
}

// Logits implements LogitsFn.
func (m *CNN) Logits(s *volt.Step, images *graph.Node) *graph.Node {
	if m.Init != nil {
		defer m.Init(s.Scope())
	}
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
