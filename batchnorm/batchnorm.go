// Package batchnorm is PyTorch's BatchNorm1d/2d/3d for GoMLX graphs:
// the same training statistics, running statistics, defaults and variable
// names, so that a model ported from PyTorch normalises, evaluates and
// checkpoints as it did there.
//
//	x = batchnorm.New(s.Scope().In("bn1"), x, 1).Done() // NCHW; -1 for NHWC
//
// Start with [New]; [Builder] holds the options.
//
// In a training graph (volt's training steps) it normalises with the
// batch's mean and biased variance over every axis but featureAxis, and
// updates the running statistics as PyTorch does:
//
//	running_mean = (1 - momentum) · running_mean + momentum · batch_mean
//	running_var  = (1 - momentum) · running_var  + momentum · batch_var · n/(n-1)
//
// (the unbiased variance, n the elements per feature; momentum 0.1 by
// default, or 1/num_batches_tracked with CumulativeAverage, PyTorch's
// momentum=None). In an evaluation graph (validation, test, predict) it
// normalises with the running statistics. Epsilon is 1e-5 (in float64
// exactly 1e-5, as PyTorch's float64 BatchNorm adds: the backend's ops
// take a float32 epsilon, so float64 is normalised with graph ops).
// IsAffine tells a batch normalization's weight and bias from other
// variables (the finetuning callbacks leave them trainable).
//
// # Why not GoMLX's layers/norm.BatchNorm
//
// GoMLX's layer (v0.28.16) keeps Keras's conventions, and no option makes
// it PyTorch's: its momentum is the weight of the old average (0.99;
// PyTorch's 0.1 is the weight of the new batch, so 0.9 there); it debiases
// the average with a step counter (momentum min(m, 1-1/k) at step k: the
// first step stores the batch's statistics, where PyTorch moves 10% of the
// way from 0 and 1); its running variance is the biased one; epsilon is
// 1e-3; and its variables are scale, offset, mean, variance and
// avg_weight. TestGoMLXBatchNormIsNotPyTorchs shows the difference on
// PyTorch's goldens. Both run on volt's default backend, whose engine
// lowers the batch normalization ops (internal/golower).
//
// # Variables
//
// Under the scope given to New: weight (ones) and bias (zeros), trainable,
// when Affine; running_mean (zeros), running_var (ones) and
// num_batches_tracked (int64 0), not trainable, when TrackRunningStats —
// PyTorch's state_dict names. Under volt.Config.Devices > 1 each rank
// normalises with its own batch's statistics, and volt gives every rank
// rank 0's running statistics after each training batch (PyTorch DDP's
// broadcast_buffers=True).
//
// # Synchronised statistics (volt.Config.SyncBatchNorm)
//
// With volt.Config.SyncBatchNorm (Lightning's sync_batchnorm) every rank
// normalises with the mean and variance of the union of the ranks' batches,
// the running statistics take those (the unbiased variance of the union's
// n values, as PyTorch's SyncBatchNorm), and the gradients are those of one
// process over the union. GoMLX's Go backend cannot all-reduce inside a
// program, so volt runs a step with M batch normalizations as M forward
// passes (the k-th returns the k-th layer's local statistics, which the
// ranks combine), M backward passes (the loss's gradient with respect to
// each layer's statistics, summed over the ranks, last layer first), then
// the step itself with the statistics and those gradients as inputs
// (internal/syncbn has the math). Limits: the training step must reach the
// same batch normalizations in the same order in every trace (an error
// otherwise); manual optimization and truncated back-propagation through
// time are refused. In one process it has no effect.
package batchnorm

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
	"github.com/voltml/volt/internal/syncbn"
)

// Builder configures one batch normalization; New creates it, Done emits
// it.
type Builder struct {
	scope       *model.Scope
	x           *graph.Node
	featureAxis int
	momentum    float64
	cumulative  bool
	epsilon     float64
	affine      bool
	track       bool
}

// New starts a batch normalization of x over every axis but featureAxis
// (1 for PyTorch's NCHW or [N, C, L], -1 for channels last), with
// PyTorch's defaults: momentum 0.1, epsilon 1e-5, affine, tracking running
// statistics.
func New(scope *model.Scope, x *graph.Node, featureAxis int) *Builder {
	return &Builder{scope: scope, x: x, featureAxis: featureAxis, momentum: 0.1, epsilon: 1e-5,
		affine: true, track: true}
}

// Momentum sets PyTorch's momentum: the weight of the new batch's
// statistics in the running ones (0.1 by default), in [0, 1].
func (b *Builder) Momentum(momentum float64) *Builder {
	b.momentum, b.cumulative = momentum, false
	return b
}

// CumulativeAverage makes the running statistics the plain average of
// every batch's statistics (PyTorch's momentum=None): momentum
// 1/num_batches_tracked.
func (b *Builder) CumulativeAverage() *Builder {
	b.cumulative = true
	return b
}

// Epsilon sets the value added to the variance (1e-5 by default).
func (b *Builder) Epsilon(epsilon float64) *Builder {
	b.epsilon = epsilon
	return b
}

// Affine sets whether a learned weight and bias scale and shift the
// normalised values (true by default).
func (b *Builder) Affine(affine bool) *Builder {
	b.affine = affine
	return b
}

// TrackRunningStats sets whether running statistics are kept (true by
// default). Without them, evaluation graphs normalise with the batch's
// statistics too, as PyTorch does.
func (b *Builder) TrackRunningStats(track bool) *Builder {
	b.track = track
	return b
}

// Done emits the normalization and returns the normalised x. It panics (at
// trace time, which volt reports as an error of the step) on an invalid
// axis, dtype or momentum, and, like PyTorch, on training with one value
// per feature.
func (b *Builder) Done() *graph.Node {
	x := b.x
	g := x.Graph()
	axis := b.featureAxis
	if axis < 0 {
		axis += x.Rank()
	}
	if axis < 0 || axis >= x.Rank() {
		panic(fmt.Sprintf("batchnorm: feature axis %d is out of range for input shape %s", b.featureAxis, x.Shape()))
	}
	if !x.DType().IsFloat() {
		panic(fmt.Sprintf("batchnorm: input dtype %s is not floating point", x.DType()))
	}
	if !b.cumulative && (b.momentum < 0 || b.momentum > 1) {
		panic(fmt.Sprintf("batchnorm: momentum %g is outside [0, 1]", b.momentum))
	}
	features := x.Shape().Dimensions[axis]
	n := x.Shape().Size() / features
	perFeature := shapes.Make(x.DType(), features)

	var weight, bias *graph.Node
	if b.affine {
		weight = b.scope.WithInitializer(initializer.One).VariableWithShape("weight", perFeature).
			SetTrainable(true).NodeValue(g)
		bias = b.scope.WithInitializer(initializer.Zero).VariableWithShape("bias", perFeature).
			SetTrainable(true).NodeValue(g)
	} else {
		weight, bias = graph.Ones(g, perFeature), graph.Zeros(g, perFeature)
	}
	eps := float32(b.epsilon)
	// The backend's batch normalization ops take epsilon as a float32: in
	// float64 that would add float32(1e-5) = 9.99999974737875e-06, not
	// PyTorch's 1e-5, which parts float64 runs wherever a variance is small
	// beside epsilon. There the normalization is computed with graph ops.
	exactEps := x.DType() == dtypes.Float64 && float64(eps) != b.epsilon
	var synced *syncbn.Trace
	if b.scope.IsTraining(g) {
		synced = syncbn.Active(g)
	}
	if !b.track {
		if synced != nil {
			mean, variance, _ := synced.Stats(b.scope.Scope(), x, axis)
			return normalizeWith(x, mean, variance, weight, bias, b.epsilon, axis)
		}
		if exactEps {
			mean, variance := moments(x, axis)
			return normalizeWith(x, mean, variance, weight, bias, b.epsilon, axis)
		}
		normalized, _, _ := graph.InternalBatchNormForTraining(x, weight, bias, eps, axis)
		return normalized
	}
	meanVar := b.scope.WithInitializer(initializer.Zero).VariableWithShape("running_mean", perFeature).
		SetTrainable(false)
	varVar := b.scope.WithInitializer(initializer.One).VariableWithShape("running_var", perFeature).
		SetTrainable(false)
	countVar := b.scope.WithInitializer(initializer.Zero).
		VariableWithShape("num_batches_tracked", shapes.Make(dtypes.Int64)).SetTrainable(false)
	if !b.scope.IsTraining(g) {
		if exactEps {
			return normalizeWith(x, meanVar.NodeValue(g), varVar.NodeValue(g), weight, bias, b.epsilon, axis)
		}
		return graph.InternalBatchNormForInference(x, weight, bias, meanVar.NodeValue(g), varVar.NodeValue(g),
			eps, axis)
	}
	var normalized, batchMean, batchVar, unbiased *graph.Node
	switch {
	case synced != nil:
		// The statistics of every rank's batch (volt's Config.SyncBatchNorm):
		// the unbiased variance is of their n values, as PyTorch's
		// SyncBatchNorm takes it.
		batchMean, batchVar, unbiased = synced.Stats(b.scope.Scope(), x, axis)
		normalized = normalizeWith(x, batchMean, batchVar, weight, bias, b.epsilon, axis)
	case n < 2:
		panic(fmt.Sprintf("batchnorm: expected more than 1 value per feature when training, got input shape %s "+
			"(feature axis %d)", x.Shape(), axis))
	case exactEps:
		batchMean, batchVar = moments(x, axis)
		normalized = normalizeWith(x, batchMean, batchVar, weight, bias, b.epsilon, axis)
		unbiased = graph.MulScalar(graph.StopGradient(batchVar), float64(n)/float64(n-1))
	default:
		normalized, batchMean, batchVar = graph.InternalBatchNormForTraining(x, weight, bias, eps, axis)
		unbiased = graph.MulScalar(graph.StopGradient(batchVar), float64(n)/float64(n-1))
	}
	if RunningStatsFrozen(b.scope) {
		return normalized // torch's track_running_stats=False on a module that has them
	}
	count := graph.OnePlus(countVar.NodeValue(g))
	countVar.SetNodeValue(count)
	var momentum *graph.Node
	if b.cumulative {
		momentum = graph.Reciprocal(graph.ConvertDType(count, x.DType()))
	} else {
		momentum = graph.Scalar(g, x.DType(), b.momentum)
	}
	keep := graph.OneMinus(momentum)
	batchMean, unbiased = graph.StopGradient(batchMean), graph.StopGradient(unbiased)
	meanVar.SetNodeValue(graph.Add(graph.Mul(keep, meanVar.NodeValue(g)), graph.Mul(momentum, batchMean)))
	varVar.SetNodeValue(graph.Add(graph.Mul(keep, varVar.NodeValue(g)), graph.Mul(momentum, unbiased)))
	return normalized
}

// moments returns x's mean and biased variance per feature (over every
// axis but axis), differentiable.
func moments(x *graph.Node, axis int) (mean, variance *graph.Node) {
	var axes []int
	for i := range x.Rank() {
		if i != axis {
			axes = append(axes, i)
		}
	}
	mean = graph.ReduceMean(x, axes...)
	centered := graph.Sub(x, graph.ExpandAxes(mean, axes...))
	return mean, graph.ReduceMean(graph.Square(centered), axes...)
}

// normalizeWith is (x - mean) · rsqrt(variance + epsilon) · weight + bias
// with per-feature mean, variance, weight and bias, differentiable in all of
// them (the synchronised statistics are inputs of the graph); half precision
// is computed in float32, as the backend's batch normalization does.
func normalizeWith(x, mean, variance, weight, bias *graph.Node, epsilon float64, axis int) *graph.Node {
	compute := x.DType()
	if compute == dtypes.Float16 || compute == dtypes.BFloat16 {
		compute = dtypes.Float32
	}
	dims := make([]int, x.Rank())
	for i := range dims {
		dims[i] = 1
	}
	dims[axis] = x.Shape().Dimensions[axis]
	perFeature := func(v *graph.Node) *graph.Node { return graph.Reshape(graph.ConvertDType(v, compute), dims...) }
	scale := graph.Mul(rsqrt(graph.AddScalar(graph.ConvertDType(variance, compute), epsilon)),
		graph.ConvertDType(weight, compute))
	y := graph.Add(graph.Mul(graph.Sub(graph.ConvertDType(x, compute), perFeature(mean)), perFeature(scale)), perFeature(bias))
	return graph.ConvertDType(y, x.DType())
}

// rsqrt is graph.Rsqrt with a gradient (GoMLX v0.28.16 defines none):
// the value is Rsqrt's bit for bit (plus x - x, an exact 0), the gradient
// -r³/2.
func rsqrt(x *graph.Node) *graph.Node {
	fixed := graph.StopGradient(x)
	r := graph.Rsqrt(fixed)
	slope := graph.StopGradient(graph.MulScalar(graph.Mul(r, graph.Square(r)), -0.5))
	return graph.Add(r, graph.Mul(graph.Sub(x, fixed), slope))
}
