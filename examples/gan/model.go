package main

import (
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
)

// GAN is a generator and a discriminator of 2-D points, trained with two
// optimizers as in Lightning 1.x: optimizer 0 updates /generator, optimizer 1
// updates /discriminator, each from its own trace of TrainingStep.
type GAN struct {
	Noise, Hidden int
	LR            float64
}

func mlp(scope *volt.Step, name string, x *graph.Node, hidden, out int) *graph.Node {
	s := scope.Scope().In("%s", name)
	x = activation.LeakyRelu(layers.DenseWithBias(s.In("l0"), x, hidden))
	x = activation.LeakyRelu(layers.DenseWithBias(s.In("l1"), x, hidden))
	return layers.DenseWithBias(s.In("out"), x, out)
}

// generate maps noise to points.
func (m *GAN) generate(s *volt.Step, batch int, dtype *graph.Node) *graph.Node {
	z := s.Scope().RandomNormal(s.Graph(), shapes.Make(dtype.DType(), batch, m.Noise))
	return mlp(s, "generator", z, m.Hidden, 2)
}

// discriminate returns the logit that points are real.
func (m *GAN) discriminate(s *volt.Step, points *graph.Node) *graph.Node {
	return mlp(s, "discriminator", points, m.Hidden, 1)
}

func bce(logits *graph.Node, real bool) *graph.Node {
	target := graph.ZerosLike(logits)
	if real {
		target = graph.OnesLike(logits)
	}
	return loss.BinaryCrossentropyLogits([]*graph.Node{target}, []*graph.Node{logits})
}

// TrainingStep implements volt.Module: the generator's loss for optimizer 0,
// the discriminator's for optimizer 1.
func (m *GAN) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	real := b.Input(0)
	fake := m.generate(s, real.Shape().Dimensions[0], real)
	if s.OptimizerIdx() == 0 {
		l := bce(m.discriminate(s, fake), true)
		s.Log("g_loss", l, volt.ProgBar)
		return l
	}
	// One discriminator pass over real and fake points together.
	n := real.Shape().Dimensions[0]
	logits := m.discriminate(s, graph.Concatenate([]*graph.Node{real, graph.StopGradient(fake)}, 0))
	realLogits := graph.Slice(logits, graph.AxisRange(0, n))
	fakeLogits := graph.Slice(logits, graph.AxisRange(n, 2*n))
	l := graph.DivScalar(graph.Add(bce(realLogits, true), bce(fakeLogits, false)), 2)
	s.Log("d_loss", l, volt.ProgBar)
	return l
}

// ValidationStep implements volt.ValidationStepper: how far generated points
// are from the ring of real ones (mean | ‖x‖ - radius |).
func (m *GAN) ValidationStep(s *volt.Step, b volt.Batch) {
	fake := m.generate(s, b.Input(0).Shape().Dimensions[0], b.Input(0))
	norm := graph.Sqrt(graph.ReduceSum(graph.Square(fake), -1))
	s.Log("ring_distance", graph.ReduceAllMean(graph.Abs(graph.AddScalar(norm, -radius))))
}

// ConfigureOptimizers implements volt.OptimizerConfigurer: one Adam each.
func (m *GAN) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimizers{
		{Optimizer: optim.Adam(m.LR).WithBetas(0.5, 0.999), Params: []string{"/generator"}},
		{Optimizer: optim.Adam(m.LR).WithBetas(0.5, 0.999), Params: []string{"/discriminator"}},
	}
}
