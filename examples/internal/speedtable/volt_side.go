package main

import (
	"context"
	"errors"
	"iter"
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
// the optimizer, logging). With fixed, the batches are one collated batch
// yielded again and again (repeatedBatch), as PyTorch's side trains on
// one batch: the step then collates nothing.
func voltStepTime(m zoo.Model, steps int, fixed bool) (time.Duration, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	clock := &batchClock{}
	cfg := m.QuietConfig()
	cfg.Callbacks = []volt.Callback{clock}
	tr, err := volt.NewTrainer(cfg)
	if err != nil {
		return 0, err
	}
	var train data.Loader = m.Loader(warmupSteps+steps, rng)
	if fixed {
		if train, err = repeatedBatch(m.Loader(1, rng), warmupSteps+steps); err != nil {
			return 0, err
		}
	}
	if err := tr.Fit(context.Background(), m.Module(), volt.Loaders{Train: train}); err != nil {
		return 0, err
	}
	return clock.median(warmupSteps), nil
}

// repeatedBatch returns a loader that yields the first batch of one, n
// times an epoch.
func repeatedBatch(one data.Loader, n int) (data.Loader, error) {
	for b, err := range one.Batches(context.Background(), 0, 0) {
		if err != nil {
			return nil, err
		}
		return sameBatch{b: b, n: n}, nil
	}
	return nil, errors.New("speedtable: the model's loader yielded no batch")
}

// sameBatch is a data.Loader of one batch yielded n times an epoch.
type sameBatch struct {
	b *data.Batch
	n int
}

// NumBatches implements data.Loader.
func (l sameBatch) NumBatches() int { return l.n }

// Batches implements data.Loader.
func (l sameBatch) Batches(ctx context.Context, _, skip int) iter.Seq2[*data.Batch, error] {
	return func(yield func(*data.Batch, error) bool) {
		for range l.n - skip {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			if !yield(l.b, nil) {
				return
			}
		}
	}
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
	var steps []float64
	for i := skip + 1; i < len(c.ends); i++ {
		steps = append(steps, float64(c.ends[i].Sub(c.ends[i-1])))
	}
	return time.Duration(medianOf(steps))
}

// medianOf returns the median of xs (the mean of the middle two for an
// even count; 0 for none).
func medianOf(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n == 0 {
		return 0
	}
	return (s[(n-1)/2] + s[n/2]) / 2
}

var _ volt.OnTrainBatchEnd = (*batchClock)(nil)
