// Package resnetstep is examples/resnet's network (stem 16, blocks 16, 32,
// 64, batch normalization, global average pooling) as a plain GoMLX
// training step, for golower's paired step benchmark
// (BenchmarkResNetStepPaired), which cannot import the example: the
// example reaches golower through volt's engine. Its layers are those of
// examples/resnet/resnet (the same GoMLX convolutions and volt's
// batchnorm), trained with volt's traced Adam.
package resnetstep

import (
	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt/batchnorm"
	"github.com/voltml/volt/optim"
)

// ImageSize is the side of the square input images.
const ImageSize = 28

// convBN is a bias-free convolution with PyTorch's padding size/2, then
// batch normalization over the channels (last).
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

// Logits returns the [batch, 10] class scores of images [batch, 28, 28, 1].
func Logits(scope *model.Scope, images *graph.Node) *graph.Node {
	x := activation.Relu(convBN(scope.In("stem"), images, 16, 3, 1))
	for i, width := range []int{16, 32, 64} {
		x = block(scope.In("block_%d", i), x, width)
	}
	x = graph.ReduceMean(x, 1, 2)
	return layers.DenseWithBias(scope.In("head"), x, 10)
}

// NewTrainer returns the executable of one Adam(lr) training step on
// (images, labels), returning the mean cross-entropy, with the weights in
// store.
func NewTrainer(backend compute.Backend, store *model.Store, lr float64) (*model.Exec, error) {
	opt := optim.Adam(lr)
	return model.NewExec(backend, store, func(scope *model.Scope, in []*graph.Node) []*graph.Node {
		scope.SetTraining(in[0].Graph(), true)
		l := loss.SparseCategoricalCrossEntropyLogits(
			[]*graph.Node{graph.ExpandAxes(in[1], -1)}, []*graph.Node{Logits(scope, in[0])})
		g := l.Graph()
		var vars []*model.Variable
		var values []*graph.Node
		for v := range store.IterVariables() {
			if v.Trainable && v.InUseByGraph(g) {
				vars = append(vars, v)
				values = append(values, v.NodeValue(g))
			}
		}
		opt.Apply(store, 0, vars, graph.Gradient(l, values...), nil)
		return []*graph.Node{l}
	})
}
