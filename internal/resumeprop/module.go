package resumeprop

import (
	"math"
	"math/rand/v2"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/metrics"
	"github.com/voltml/volt/optim"
)

// features is the number of inputs of the regression.
const features = 3

// module is a 3-8-1 MLP regressing a fixed nonlinear function: small enough
// to compile and train in milliseconds, with several variables so that the
// global gradient norm sums more than one tensor.
type module struct{ sc Scenario }

func (m *module) forward(s *volt.Step, x *graph.Node) *graph.Node {
	h := activation.Relu(layers.DenseWithBias(s.Scope().In("hidden"), x, 8))
	return layers.DenseWithBias(s.Scope().In("out"), h, 1)
}

// TrainingStep implements volt.Module.
func (m *module) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	preds := m.forward(s, b.Input(0))
	l := loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{preds})
	s.Log("train_loss", l, volt.OnStep(true), volt.OnEpoch(true), volt.ProgBar)
	if m.sc.TrainMetric {
		s.LogMetric("train_mae", metrics.MeanAbsoluteError{}, preds, b.Label(0), volt.OnStep(true), volt.OnEpoch(true))
	}
	return l
}

// ValidationStep implements volt.ValidationStepper.
func (m *module) ValidationStep(s *volt.Step, b volt.Batch) {
	preds := m.forward(s, b.Input(0))
	s.Log("val_loss", loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{preds}), volt.SyncDist)
	s.LogMetric("val_mse", metrics.MeanSquaredError{}, preds, b.Label(0))
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *module) ConfigureOptimizers() volt.Optimizers {
	sc := m.sc
	setup := volt.OptimizerSetup{Optimizer: optim.Adam(0.02)}
	if sc.Optimizer == "sgd-momentum" {
		setup.Optimizer = optim.SGD(0.05).WithMomentum(0.9)
	}
	switch sc.Scheduler {
	case "step":
		sched := optim.NewStepLR(sc.StepSize, 0.7)
		setup.Scheduler, setup.SchedulerFrequency = sched, sc.SchedFreq
		setup.Interval = volt.IntervalEpoch
		if sc.SchedInterval == "step" {
			setup.Interval = volt.IntervalStep
		}
	case "plateau":
		sched := optim.NewReduceLROnPlateau(optim.PlateauMin)
		// Threshold 0.2: only a marked improvement counts, so the rate
		// drops during these short runs.
		sched.Patience, sched.Threshold, sched.Factor = sc.Patience, 0.2, 0.5
		if sc.Patience == 0 {
			sched.Patience = -1 // PyTorch's patience 0; the zero value means 10
		}
		setup.Scheduler, setup.Monitor, setup.Interval = sched, sc.PlateauOn, volt.IntervalEpoch
	}
	return volt.Optimizers{setup}
}

// dataset returns n examples of y = sin(x·w) + x₀·x₁ drawn with seed.
func dataset(n int, seed uint64) data.Slice {
	r := rand.New(rand.NewPCG(seed, 7))
	w := [features]float64{1.5, -2, 0.7}
	out := make(data.Slice, n)
	for i := range out {
		x := make([]float32, features)
		dot := 0.0
		for j := range x {
			x[j] = float32(r.NormFloat64())
			dot += float64(x[j]) * w[j]
		}
		y := float32(math.Sin(dot) + float64(x[0]*x[1]))
		out[i] = data.Example{Inputs: []data.Field{{Value: x}}, Labels: []data.Field{{Value: []float32{y}}}}
	}
	return out
}

// loaders returns the scenario's training and validation loaders; the
// trainer shards them over the ranks.
func loaders(sc Scenario) volt.Loaders {
	return volt.Loaders{
		Train: &data.DataLoader{Dataset: dataset(sc.Examples, 1), BatchSize: sc.BatchSize, Shuffle: sc.Shuffle},
		Val:   []data.Loader{&data.DataLoader{Dataset: dataset(sc.ValExamples, 2), BatchSize: 4}},
	}
}
