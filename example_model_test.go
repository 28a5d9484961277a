package volt_test

import (
	"log/slog"
	"math/rand/v2"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// exLine is the model of the examples: one dense layer regressing y from
// eight features, trained with SGD.
type exLine struct{}

func (exLine) mse(s *volt.Step, b volt.Batch) *graph.Node {
	pred := layers.DenseWithBias(s.Scope().In("dense"), b.Input(0), 1)
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
}

// TrainingStep implements volt.Module: it is traced once into a graph.
func (m exLine) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.mse(s, b)
	s.Log("train_loss", l, volt.ProgBar)
	return l
}

// ValidationStep implements volt.ValidationStepper.
func (m exLine) ValidationStep(s *volt.Step, b volt.Batch) { s.Log("val_loss", m.mse(s, b)) }

// TestStep implements volt.TestStepper.
func (m exLine) TestStep(s *volt.Step, b volt.Batch) { s.Log("test_loss", m.mse(s, b)) }

// PredictStep implements volt.PredictStepper.
func (exLine) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return layers.DenseWithBias(s.Scope().In("dense"), b.Input(0), 1)
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (exLine) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.SGD(0.05)) }

// exExamples returns n examples of y = x·w + 0.5 with 8 random features.
func exExamples(n int, seed uint64) data.Slice {
	r := rand.New(rand.NewPCG(seed, 7))
	w := []float32{1, -2, 0.5, 3, 0, -1, 2, 0.25}
	out := make(data.Slice, n)
	for i := range out {
		x := make([]float32, len(w))
		y := float32(0.5)
		for j := range x {
			x[j] = float32(r.NormFloat64())
			y += x[j] * w[j]
		}
		out[i] = data.Example{Inputs: []data.Field{{Value: x}}, Labels: []data.Field{{Value: []float32{y}}}}
	}
	return out
}

// exData holds 64 training examples in 4 shuffled batches, one validation
// batch of 16 and 16 test (and predict) examples in 2 batches.
func exData() volt.Loaders {
	test := &data.DataLoader{Dataset: exExamples(16, 3), BatchSize: 8}
	return volt.Loaders{
		Train:   &data.DataLoader{Dataset: exExamples(64, 1), BatchSize: 16, Shuffle: true},
		Val:     []data.Loader{&data.DataLoader{Dataset: exExamples(16, 2), BatchSize: 16}},
		Test:    []data.Loader{test},
		Predict: []data.Loader{test},
	}
}

// exQuiet turns off what the examples do not show: the default CSV
// logger and checkpoints under ./volt_logs, the model summary, the default
// progress bar and volt's own messages.
func exQuiet(cfg volt.Config) volt.Config {
	cfg.DisableLoggers = true
	cfg.DisableCheckpointing = true
	cfg.DisableModelSummary = true
	cfg.Log = slog.New(slog.DiscardHandler)
	cfg.EnableProgressBar = volt.Ptr(false)
	cfg.Seed = volt.Ptr[uint64](42)
	return cfg
}
