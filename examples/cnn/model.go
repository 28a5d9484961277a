package main

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
)

// CNN classifies 28×28 digits: two 3×3 convolutions (32 and 64 filters)
// each followed by ReLU and 2×2 max-pooling, then dense 128 and dense 10.
type CNN struct {
	LR float64 // Adam learning rate
}

// logits returns the [batch, 10] class scores of flattened [batch, 784] images.
func (m *CNN) logits(s *volt.Step, images *graph.Node) *graph.Node {
	x := graph.Reshape(images, images.Shape().Dimensions[0], 28, 28, 1) // channels last
	for i, filters := range []int{32, 64} {
		x = layers.Convolution(s.Scope().In("conv_%d", i), x).Channels(filters).KernelSize(3).Done()
		x = graph.MaxPool(activation.Relu(x)).Window(2).Done()
	}
	x = graph.Reshape(x, x.Shape().Dimensions[0], -1)
	x = activation.Relu(layers.DenseWithBias(s.Scope().In("dense_0"), x, 128))
	return layers.DenseWithBias(s.Scope().In("dense_1"), x, 10)
}

// lossAndAccuracy returns the mean cross-entropy and the accuracy of a batch.
func (m *CNN) lossAndAccuracy(s *volt.Step, b volt.Batch) (*graph.Node, *graph.Node) {
	logits := m.logits(s, b.Input(0))
	labels := b.Label(0) // [batch] int32
	l := loss.SparseCategoricalCrossEntropyLogits([]*graph.Node{graph.ExpandAxes(labels, -1)}, []*graph.Node{logits})
	correct := graph.Equal(graph.ArgMax(logits, -1, dtypes.Int32), labels)
	return l, graph.ReduceAllMean(graph.ConvertDType(correct, logits.DType()))
}

// TrainingStep implements volt.Module.
func (m *CNN) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l, acc := m.lossAndAccuracy(s, b)
	s.Log("train_loss", l, volt.ProgBar)
	s.Log("train_acc", acc, volt.OnEpoch(true))
	return l
}

// ValidationStep implements volt.ValidationStepper.
func (m *CNN) ValidationStep(s *volt.Step, b volt.Batch) {
	l, acc := m.lossAndAccuracy(s, b)
	s.Log("val_loss", l, volt.ProgBar)
	s.Log("val_acc", acc, volt.ProgBar)
}

// TestStep implements volt.TestStepper.
func (m *CNN) TestStep(s *volt.Step, b volt.Batch) {
	l, acc := m.lossAndAccuracy(s, b)
	s.Log("test_loss", l)
	s.Log("test_acc", acc)
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *CNN) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(m.LR)) }
