// Package resnet is examples/resnet's network, importable so that package
// parity can train it against PyTorch (tools/parity/resnet.py builds the
// same network in PyTorch).
//
// Start with [New], the example's configuration; [ResNet] holds the widths
// and the learning rate.
package resnet

import (
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt"
	"github.com/voltml/volt/batchnorm"
	"github.com/voltml/volt/examples/internal/digits"
	"github.com/voltml/volt/optim"
)

// ResNet classifies 28×28 digits (flattened [batch, 784] images) with a
// small residual network: a 3×3 stem convolution with batch normalization
// and ReLU, then one residual block per entry of Widths (two 3×3
// convolutions, each batch-normalized, added to the block's input; a block
// that widens also halves the image with stride 2 and projects the
// shortcut with a 1×1 convolution), global average pooling and a dense
// layer to the 10 classes. Convolutions have no bias (batch
// normalization's offset replaces it), as in torchvision's ResNets; batch
// normalization is PyTorch's BatchNorm2d (package batchnorm).
//
// Its variables sit at the root of the step's scope: /stem/conv/weights,
// /stem/bn/weight, …, /block_1/shortcut/bn/running_var, /head/dense/biases.
type ResNet struct {
	Stem   int     // channels of the stem convolution
	Widths []int   // channels of each residual block
	LR     float64 // Adam learning rate, when Optimizers is nil
	// Optimizers, if set, replaces Adam(LR).
	Optimizers volt.Optimizers
	// Init, if set, is deferred at the end of building the layers (e.g.
	// parity.Tensors.Apply, to start from PyTorch's weights).
	Init func(scope *model.Scope)
}

// New returns the example's network: stem 16, blocks 16, 32, 64
// (28×28 → 14×14 → 7×7), Adam 1e-3.
func New() *ResNet { return &ResNet{Stem: 16, Widths: []int{16, 32, 64}, LR: 1e-3} }

// convBN is a bias-free size×size convolution with the given stride and
// PyTorch's padding size/2 (GoMLX's PadSame), then batch normalization
// (channels last).
func convBN(scope *model.Scope, x *graph.Node, channels, size, stride int) *graph.Node {
	x = layers.Convolution(scope.In("conv"), x).Channels(channels).KernelSize(size).Strides(stride).PadSame().
		UseBias(false).Done()
	return batchnorm.New(scope.In("bn"), x, -1).Done()
}

// block is one residual block of width channels.
func block(scope *model.Scope, x *graph.Node, channels int) *graph.Node {
	stride, shortcut := 1, x
	if in := x.Shape().Dimensions[3]; in != channels {
		stride = 2
		shortcut = convBN(scope.In("shortcut"), x, channels, 1, 2)
	}
	y := activation.Relu(convBN(scope.In("a"), x, channels, 3, stride))
	y = convBN(scope.In("b"), y, channels, 3, 1)
	return activation.Relu(graph.Add(y, shortcut))
}

// Logits implements digits.LogitsFn.
func (m *ResNet) Logits(s *volt.Step, images *graph.Node) *graph.Node {
	scope := s.Scope()
	if m.Init != nil {
		defer m.Init(scope)
	}
	x := graph.Reshape(images, images.Shape().Dimensions[0], 28, 28, 1) // channels last
	x = activation.Relu(convBN(scope.In("stem"), x, m.Stem, 3, 1))
	for i, width := range m.Widths {
		x = block(scope.In("block_%d", i), x, width)
	}
	x = graph.ReduceMean(x, 1, 2) // global average pooling: [batch, channels]
	return layers.DenseWithBias(scope.In("head"), x, 10)
}

// TrainingStep implements volt.Module: the mean cross-entropy, logged as
// train_loss (digits.TrainingStep).
func (m *ResNet) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return digits.TrainingStep(s, b, m.Logits)
}

// ValidationStep implements volt.ValidationStepper: val_loss, val_acc and
// val_f1, with batch normalization's running statistics.
func (m *ResNet) ValidationStep(s *volt.Step, b volt.Batch) { digits.ValidationStep(s, b, m.Logits) }

// TestStep implements volt.TestStepper.
func (m *ResNet) TestStep(s *volt.Step, b volt.Batch) { digits.TestStep(s, b, m.Logits) }

// PredictStep implements volt.PredictStepper: the predicted class
// (digits.PredictStep), with batch normalization's running statistics.
func (m *ResNet) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return digits.PredictStep(s, b, m.Logits)
}

// ConfigureOptimizers implements volt.OptimizerConfigurer: m.Optimizers,
// or Adam(LR).
func (m *ResNet) ConfigureOptimizers() volt.Optimizers {
	if m.Optimizers != nil {
		return m.Optimizers
	}
	return volt.Optimize(optim.Adam(m.LR))
}
