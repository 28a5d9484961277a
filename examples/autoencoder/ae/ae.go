// Package ae is examples/autoencoder's network, importable so that package
// parity can train it against PyTorch (tools/parity/autoencoder.py builds
// the same network in PyTorch).
//
// Start with [New], the example's configuration; [Autoencoder] holds the
// layer sizes and the learning rate.
package ae

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
)

// Autoencoder reconstructs flattened images ([batch, pixels], values in
// [0, 1]) through a narrow code: a dense encoder pixels → Hidden → Code
// (ReLU after the hidden layer, none on the code) and a mirrored decoder
// Code → Hidden → pixels (ReLU, then a sigmoid), trained on the mean
// squared error between the reconstruction and the image (PyTorch's
// F.mse_loss). The pixel count is the input's width. The labels of a batch,
// if any, are ignored.
//
// Its variables: /encoder/hidden/dense/{weights,biases}, /encoder/code/…,
// /decoder/hidden/…, /decoder/output/….
type Autoencoder struct {
	Hidden int     // width of the hidden layers
	Code   int     // width of the code
	LR     float64 // Adam learning rate, when Optimizers is nil
	// Optimizers, if set, replaces Adam(LR).
	Optimizers volt.Optimizers
	// Init, if set, is deferred at the end of building the layers (e.g.
	// parity.Tensors.Apply, to start from PyTorch's weights).
	Init func(scope *model.Scope)
}

// New returns the example's network for 28×28 digits: hidden 256, code 32
// (784 → 256 → 32 → 256 → 784), Adam 1e-3.
func New() *Autoencoder { return &Autoencoder{Hidden: 256, Code: 32, LR: 1e-3} }

// Reconstruct returns the reconstruction of images [batch, pixels], in
// (0, 1).
func (m *Autoencoder) Reconstruct(s *volt.Step, images *graph.Node) *graph.Node {
	if images.Rank() != 2 {
		panic(fmt.Sprintf("ae: images are shaped %s, want [batch, pixels]", images.Shape()))
	}
	scope := s.Scope()
	if m.Init != nil {
		defer m.Init(scope)
	}
	pixels := images.Shape().Dimensions[1]
	enc, dec := scope.In("encoder"), scope.In("decoder")
	x := activation.Relu(layers.DenseWithBias(enc.In("hidden"), images, m.Hidden))
	code := layers.DenseWithBias(enc.In("code"), x, m.Code)
	x = activation.Relu(layers.DenseWithBias(dec.In("hidden"), code, m.Hidden))
	return graph.Sigmoid(layers.DenseWithBias(dec.In("output"), x, pixels))
}

// Loss is the mean squared error of the reconstruction of a batch's first
// input.
func (m *Autoencoder) Loss(s *volt.Step, b volt.Batch) *graph.Node {
	images := b.Input(0)
	return loss.MeanSquaredError([]*graph.Node{images}, []*graph.Node{m.Reconstruct(s, images)})
}

// TrainingStep implements volt.Module: the reconstruction error, logged as
// train_loss.
func (m *Autoencoder) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.Loss(s, b)
	s.Log("train_loss", l, volt.ProgBar)
	return l
}

// ValidationStep implements volt.ValidationStepper: val_loss.
func (m *Autoencoder) ValidationStep(s *volt.Step, b volt.Batch) {
	s.Log("val_loss", m.Loss(s, b), volt.ProgBar, volt.SyncDist)
}

// TestStep implements volt.TestStepper: test_loss.
func (m *Autoencoder) TestStep(s *volt.Step, b volt.Batch) {
	s.Log("test_loss", m.Loss(s, b), volt.SyncDist)
}

// PredictStep implements volt.PredictStepper: the reconstructions.
func (m *Autoencoder) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.Reconstruct(s, b.Input(0))
}

// ConfigureOptimizers implements volt.OptimizerConfigurer: m.Optimizers,
// or Adam(LR).
func (m *Autoencoder) ConfigureOptimizers() volt.Optimizers {
	if m.Optimizers != nil {
		return m.Optimizers
	}
	return volt.Optimize(optim.Adam(m.LR))
}
