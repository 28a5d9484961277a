package callback_test

import (
	"context"
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
// eight features, with SGD at LR.
type exLine struct{ LR float64 }

func (exLine) mse(s *volt.Step, b volt.Batch) *graph.Node {
	pred := layers.DenseWithBias(s.Scope().In("dense"), b.Input(0), 1)
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
}

// TrainingStep implements volt.Module.
func (m exLine) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.mse(s, b)
	s.Log("train_loss", l)
	return l
}

// ValidationStep implements volt.ValidationStepper.
func (m exLine) ValidationStep(s *volt.Step, b volt.Batch) { s.Log("val_loss", m.mse(s, b)) }

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m exLine) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.SGD(m.LR)) }

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

// exData holds 64 training examples in 4 shuffled batches and one
// validation batch of 16.
func exData() volt.Loaders {
	return volt.Loaders{
		Train: &data.DataLoader{Dataset: exExamples(64, 1), BatchSize: 16, Shuffle: true},
		Val:   []data.Loader{&data.DataLoader{Dataset: exExamples(16, 2), BatchSize: 16}},
	}
}

// exFit fits m on dm with a quiet trainer of cfg (exQuiet), panicking on
// an error as the examples do, and returns the trainer.
func exFit(cfg volt.Config, m volt.Module, dm volt.DataModule) *volt.Trainer {
	trainer, err := volt.NewTrainer(exQuiet(cfg))
	if err != nil {
		panic(err)
	}
	if err := trainer.Fit(context.Background(), m, dm); err != nil {
		panic(err)
	}
	return trainer
}

// exQuiet turns off the default CSV logger, the model summary and volt's
// own messages, and fixes the seed.
func exQuiet(cfg volt.Config) volt.Config {
	cfg.DisableLoggers = true
	cfg.DisableModelSummary = true
	cfg.Log = slog.New(slog.DiscardHandler)
	cfg.Seed = volt.Ptr[uint64](42)
	return cfg
}
