// Package nn is torch.nn's everyday layers and losses for volt's steps
// ([Linear], [LayerNorm], [ReLU], [Dropout], [LSTM], [GRU], [MSELoss]), with PyTorch's
// defaults, so that a model ported from Lightning needs one import instead
// of GoMLX's layers, activation, norm and loss packages, and trains from the
// same starting point:
//
//	x = nn.ReLU(nn.LayerNorm(scope, nn.Linear(scope, x, 64)))
//	x = nn.Dropout(scope, x, 0.1)
//	loss := nn.MSELoss(nn.Linear(s.Scope().In("out"), x, 1), b.Label(0))
//
// Where GoMLX's defaults differ from PyTorch's (a dense layer's He-normal
// weights and zero biases, LayerNorm's epsilon 1e-3) these functions take
// PyTorch's: nn.Linear's weights and biases are U(−1/√fan_in, 1/√fan_in)
// (package torchinit), nn.LayerNorm's epsilon is 1e-5. The variables live
// in the scope given, as GoMLX's layers name them (Linear's under its
// "dense" sub-scope, LayerNorm's gain and offset in the scope itself), so
// two layers of one kind need two scopes (scope.In("hidden_0")).
package nn

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/layers/norm"
	"github.com/gomlx/gomlx/ml/model"
)

// LayerNormEps is nn.LayerNorm's epsilon, PyTorch's default.
const LayerNormEps = 1e-5

// Linear is torch.nn.Linear(in, out) applied to x (features on the last
// axis): x·W + b, with PyTorch's initialisation of W and b.
func Linear(scope *model.Scope, x *graph.Node, out int) *graph.Node {
	y := layers.DenseWithBias(scope, x, out)
	store := scope.Store()
	for _, name := range []string{"weights", "biases"} { // PyTorch's initialisers, for these two only
		initialiseAsTorch(store, store.GetVariable(model.JoinPath(scope.Scope(), "dense", name))) // DenseWithBias's scope
	}
	return y
}

// LayerNorm is torch.nn.LayerNorm(x's last dimension): it normalises the
// last axis with the biased variance and epsilon 1e-5, then applies a
// learned gain (initially 1) and offset (initially 0).
func LayerNorm(scope *model.Scope, x *graph.Node) *graph.Node {
	return norm.LayerNorm(scope, x, -1).Epsilon(LayerNormEps).Done()
}

// ReLU is torch.nn.ReLU.
func ReLU(x *graph.Node) *graph.Node { return activation.Relu(x) }

// Dropout is torch.nn.Dropout(p): in training (volt sets GoMLX's training
// flag in TrainingStep) each value is zeroed with probability p and the rest
// scaled by 1/(1−p); in validation, test and predict it is the identity.
func Dropout(scope *model.Scope, x *graph.Node, p float64) *graph.Node {
	if p < 0 || p >= 1 {
		panic(fmt.Sprintf("nn.Dropout: p must be in [0, 1), got %v", p))
	}
	return layers.DropoutStatic(scope, x, p)
}
