package main

import (
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
)

// GAN is a generator and a discriminator of 2-D points trained by manual
// optimization, as Lightning 2.x's basic GAN is: in each TrainingStep
// optimizer 0 steps /generator, then optimizer 1 steps /discriminator on
// real points and on the updated generator's points. The noise is the
// batch's second input, drawn by the data pipeline (see ring), so that
// under Devices: N the ranks' batches together are one process's batch
// of N times the size, noise included.
type GAN struct {
	Hidden int
	LR     float64
}

// AutomaticOptimization implements volt.AutomaticOptimizer: manual.
func (m *GAN) AutomaticOptimization() bool { return false }

// mlp is a 2-hidden-layer perceptron under scope name; each call reads the
// same variables (a TrainingStep runs the generator twice).
func mlp(scope *volt.Step, name string, x *graph.Node, hidden, out int) *graph.Node {
	s := scope.Scope().At("%s", name)
	x = activation.LeakyRelu(layers.DenseWithBias(s.In("l0"), x, hidden))
	x = activation.LeakyRelu(layers.DenseWithBias(s.In("l1"), x, hidden))
	return layers.DenseWithBias(s.In("out"), x, out)
}

// generate maps noise to points.
func (m *GAN) generate(s *volt.Step, noise *graph.Node) *graph.Node {
	return mlp(s, "generator", noise, m.Hidden, 2)
}

// discriminate returns the logit that points are real.
func (m *GAN) discriminate(s *volt.Step, points *graph.Node) *graph.Node {
	return mlp(s, "discriminator", points, m.Hidden, 1)
}

// bce is the mean binary cross-entropy of logits against all-real or
// all-fake targets.
func bce(logits *graph.Node, real bool) *graph.Node {
	target := graph.ZerosLike(logits)
	if real {
		target = graph.OnesLike(logits)
	}
	return loss.BinaryCrossentropyLogits([]*graph.Node{target}, []*graph.Node{logits})
}

// TrainingStep implements volt.Module: a generator step, then a
// discriminator step. The losses are batch means logged with SyncDist, so
// under Devices: N the logged values are those of the whole global batch.
func (m *GAN) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	real, noise := b.Input(0), b.Input(1)
	opts := s.Optimizers()

	gLoss := bce(m.discriminate(s, m.generate(s, noise)), true)
	s.Log("g_loss", gLoss, volt.ProgBar, volt.SyncDist)
	opts[0].Step(gLoss)

	// The generator read after its Step is the updated one; its points are
	// constants for the discriminator's gradient.
	fake := graph.StopGradient(m.generate(s, noise))
	n := real.Shape().Dimensions[0]
	logits := m.discriminate(s, graph.Concatenate([]*graph.Node{real, fake}, 0))
	realLogits := graph.Slice(logits, graph.AxisRange(0, n))
	fakeLogits := graph.Slice(logits, graph.AxisRange(n, 2*n))
	dLoss := graph.DivScalar(graph.Add(bce(realLogits, true), bce(fakeLogits, false)), 2)
	s.Log("d_loss", dLoss, volt.ProgBar, volt.SyncDist)
	opts[1].Step(dLoss)
	return dLoss
}

// ValidationStep implements volt.ValidationStepper: how far generated points
// are from the ring of real ones (mean | ‖x‖ - radius |), over every rank's
// points under Devices: N.
func (m *GAN) ValidationStep(s *volt.Step, b volt.Batch) {
	fake := m.generate(s, b.Input(1))
	norm := graph.Sqrt(graph.ReduceSum(graph.Square(fake), -1))
	s.Log("ring_distance", graph.ReduceAllMean(graph.Abs(graph.AddScalar(norm, -radius))), volt.SyncDist)
}

// ConfigureOptimizers implements volt.OptimizerConfigurer: one Adam each.
func (m *GAN) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimizers{
		{Optimizer: optim.Adam(m.LR).WithBetas(0.5, 0.999), Params: []string{"/generator"}},
		{Optimizer: optim.Adam(m.LR).WithBetas(0.5, 0.999), Params: []string{"/discriminator"}},
	}
}
