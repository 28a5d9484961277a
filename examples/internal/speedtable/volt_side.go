package main

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/examples/internal/zoo"
)

// warmupSteps are the steps neither side times: the first traces and
// compiles (volt) or allocates (PyTorch).
const warmupSteps = 5

// voltStepTime trains m for warmupSteps+steps batches with volt's Trainer
// on the default backend and returns the median time of a step after the
// warm-up: the time between two consecutive training batch ends, which
// includes everything volt does per step (batching, the compiled step,
// the optimizer, logging).
func voltStepTime(m zoo.Model, steps int) (time.Duration, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	clock := &batchClock{}
	cfg := volt.Config{MaxEpochs: 1, NumSanityValSteps: volt.Ptr(0), DisableLoggers: true,
		DisableCheckpointing: true, DisableModelSummary: true, EnableProgressBar: volt.Ptr(false),
		Log: slog.New(slog.DiscardHandler), Callbacks: []volt.Callback{clock}}
	if m.ClipNorm > 0 {
		cfg.GradientClipVal, cfg.GradientClipAlgorithm = m.ClipNorm, volt.ClipNorm
	}
	tr, err := volt.NewTrainer(cfg)
	if err != nil {
		return 0, err
	}
	train := &data.DataLoader{Dataset: m.Examples(m.Batch*(warmupSteps+steps), rng), BatchSize: m.Batch}
	if err := tr.Fit(context.Background(), m.Module(), volt.Loaders{Train: train}); err != nil {
		return 0, err
	}
	return clock.median(warmupSteps), nil
}

// batchClock records when each training batch ends.
type batchClock struct{ ends []time.Time }

// OnTrainBatchEnd implements volt.OnTrainBatchEnd.
func (c *batchClock) OnTrainBatchEnd(*volt.Trainer, *volt.StepOutput, *data.Batch, int) error {
	c.ends = append(c.ends, time.Now())
	return nil
}

// median returns the median interval between batch ends after the first skip batches.
func (c *batchClock) median(skip int) time.Duration {
	var steps []time.Duration
	for i := skip + 1; i < len(c.ends); i++ {
		steps = append(steps, c.ends[i].Sub(c.ends[i-1]))
	}
	if len(steps) == 0 {
		return 0
	}
	slices.Sort(steps)
	n := len(steps)
	return (steps[(n-1)/2] + steps[n/2]) / 2
}

var _ volt.OnTrainBatchEnd = (*batchClock)(nil)
