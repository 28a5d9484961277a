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

// cnn is tools/parity/cnn.py's model: a 3×3 convolution of 4 channels,
// ReLU, global average pooling and a dense layer, channels-last.
type cnn struct{ weights *parity.Tensors }

func (m *cnn) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	scope := s.Scope().In("cnn")
	defer m.weights.Apply(scope)
	x := layers.Convolution(scope.In("conv1"), b.Input(0)).Channels(4).KernelSize(3).Done()
	x = graph.ReduceMean(activation.Relu(x), 1, 2)
	pred := layers.DenseWithBias(scope.In("head"), x, 1)
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
}

func (m *cnn) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimizers{{Optimizer: optim.Adam(1e-2), Scheduler: optim.NewExponentialLR(0.95), Interval: volt.IntervalStep}}
}

// TestCNNParity: a convolution loaded from PyTorch's weights
// (torch_parity.conv2d's layout) trains 50 steps with Adam, clipping and a
// per-step ExponentialLR with PyTorch's loss at every step (1e-4
// relative).
func TestCNNParity(t *testing.T) {
	c := readCase(t, "cnn_adam", "cnn.py")
	c.check(t, volt.Config{GradientClipVal: 1}, &cnn{weights: c.file})
}
