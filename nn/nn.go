// Package nn is torch.nn's layers and losses for volt's steps, with
// PyTorch's defaults, so that a model ported from Lightning needs one
// import instead of GoMLX's layers, activation, norm and loss packages,
// and trains from the same starting point:
//
//	x = nn.ReLU(nn.LayerNorm(scope, nn.Linear(scope, x, 64)))
//	x = nn.Dropout(scope, x, 0.1)
//	loss := nn.MSELoss(nn.Linear(s.Scope().In("out"), x, 1), b.Label(0))
//
// # Torch-named layers
//
// [Conv1d], [Conv2d], [MaxPool2d], [AvgPool2d], [AdaptiveAvgPool2d],
// [TorchLinear], [Embedding], [GroupNorm], [TorchLayerNorm],
// [MultiheadAttention], [TransformerEncoderLayer] and
// [TransformerDecoderLayer] take torch's
// layouts (NCHW images, [N, L, E] sequences as with batch_first=True)
// and keep their parameters as torch's state_dict does: the same names
// (weight, bias, in_proj_weight, out_proj.weight, self_attn.…, linear1.…,
// norm1.…), shapes ([out, in] for a linear weight, [out, in/groups, kH,
// kW] for a convolution's) and initialisation, in the scope given, so a
// scope named as the torch module's attribute loads its keys as they are
// (package statedict; batch norms are package batchnorm's):
//
//	x = nn.Conv2d(scope.In("conv1"), x, 64, 7).Stride(2).Padding(3).NoBias().Done() // conv1.weight
//
// Each is checked against torch (forward, and gradients with respect to
// the input and every parameter) on torch-written goldens in testdata, as
// are the activations ([GELU], [GELUTanh], [SiLU], [Sigmoid], [Tanh],
// [LeakyReLU], [ELU], [Softmax], [LogSoftmax]); [ScaledDotProductAttention]
// is torch 2's function, checked through package gpt2's goldens.
//
// # GoMLX-named layers
//
// [Linear], [LayerNorm], [LSTM] and [GRU] predate them and keep GoMLX's
// variable names (Linear's "dense/weights" [in, out], LayerNorm's gain and
// offset), which volt checkpoints and the parity cases hold, with
// PyTorch's initialisation (package torchinit) and epsilon 1e-5.
//
// # Losses
//
// [CrossEntropyLoss], [NLLLoss], [BCELoss], [BCEWithLogitsLoss],
// [MSELoss], [L1Loss], [SmoothL1Loss] and [KLDivLoss] take torch's
// keyword arguments as options: [Reduce] (mean, sum, none; batchmean for
// KLDivLoss), [Weight], [IgnoreIndex], [LabelSmoothing], [PosWeight],
// [Beta], [LogTarget]; a loss refuses an option it does not take, naming
// the ones it does.
//
//	loss := nn.CrossEntropyLoss(logits, labels, nn.IgnoreIndex(0), nn.LabelSmoothing(0.1))
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
