// Package cnn is the convolutional network of issue 16, shared by
// golower's step benchmark and tools/cnnbench/mnistcnn: conv 3×3 32 +
// ReLU, 2×2 max-pool, conv 3×3 64 + ReLU, 2×2 max-pool, dense 128 + ReLU,
// dense 10, trained with Adam on MNIST-shaped batches. It matches
// tools/cnnbench/torch_cnn_bench.py layer for layer (valid padding).
package cnn

import (
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt/optim"
)

// ImageSize is the side of the square input images.
const ImageSize = 28

// Logits returns the [batch, 10] class scores of images, shaped
// [batch, 784] or [batch, 28, 28, 1].
func Logits(scope *model.Scope, images *graph.Node) *graph.Node {
	x := graph.Reshape(images, images.Shape().Dimensions[0], ImageSize, ImageSize, 1)
	for i, filters := range []int{32, 64} {
		x = layers.Convolution(scope.In("conv_%d", i), x).Channels(filters).KernelSize(3).Done()
		x = graph.MaxPool(activation.Relu(x)).Window(2).Done()
	}
	x = graph.Reshape(x, x.Shape().Dimensions[0], -1)
	x = activation.Relu(layers.DenseWithBias(scope.In("dense_0"), x, 128))
	return layers.DenseWithBias(scope.In("dense_1"), x, 10)
}

// Loss returns the mean cross-entropy of the network on a batch.
func Loss(scope *model.Scope, images, labels *graph.Node) *graph.Node {
	return loss.SparseCategoricalCrossEntropyLogits(
		[]*graph.Node{graph.ExpandAxes(labels, -1)}, []*graph.Node{Logits(scope, images)})
}

// NewTrainer returns the executable of one Adam(lr) training step on
// (images, labels), returning the loss, with the weights in store.
func NewTrainer(backend compute.Backend, store *model.Store, lr float64) (*model.Exec, error) {
	opt := optim.Adam(lr)
	return model.NewExec(backend, store, func(scope *model.Scope, in []*graph.Node) []*graph.Node {
		scope.SetTraining(in[0].Graph(), true)
		l := Loss(scope, in[0], in[1])
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

// NewCounter returns the executable counting the correct predictions of
// a batch (an int32 scalar), with the weights in store.
func NewCounter(backend compute.Backend, store *model.Store) (*model.Exec, error) {
	return model.NewExec(backend, store, func(scope *model.Scope, in []*graph.Node) []*graph.Node {
		predicted := graph.ArgMax(Logits(scope, in[0]), -1, dtypes.Int32)
		correct := graph.ConvertDType(graph.Equal(predicted, graph.ConvertDType(in[1], dtypes.Int32)), dtypes.Int32)
		return []*graph.Node{graph.ReduceAllSum(correct)}
	})
}
