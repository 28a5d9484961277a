package volt_test

import (
	"slices"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// weights returns a copy of every variable's bytes, keyed by path.
func weights(t *testing.T, tr *volt.Trainer) map[string][]byte {
	t.Helper()
	w, err := testutil.Weights(tr.Store())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func trainWith(t *testing.T, seed uint64, workers int) map[string][]byte {
	t.Helper()
	volt.SeedEverything(seed)
	t.Cleanup(func() { volt.SeedEverything(0) })
	dm := boringData()
	dm.Train.(*data.DataLoader).Workers = workers
	tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 3}), &boring{}, dm)
	return weights(t, tr)
}

func equalWeights(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if string(b[k]) != string(v) {
			return false
		}
	}
	return true
}

func TestSameSeedSameWeights(t *testing.T) {
	a := trainWith(t, 7, 0)
	if len(a) == 0 {
		t.Fatal("no variables")
	}
	if b := trainWith(t, 7, 0); !equalWeights(a, b) {
		t.Error("two runs with seed 7 differ")
	}
	if c := trainWith(t, 7, 3); !equalWeights(a, c) {
		t.Error("3 prefetch workers changed the result")
	}
	if d := trainWith(t, 8, 0); equalWeights(a, d) {
		t.Error("seeds 7 and 8 gave the same weights: the seed is not used")
	}
}

// orderRecorder records the first label of every training batch: the data
// order a run saw.
type orderRecorder struct{ first []float32 }

func (r *orderRecorder) OnTrainBatchEnd(_ *volt.Trainer, _ *volt.StepOutput, b *data.Batch, _ int) error {
	r.first = append(r.first, tensors.MustCopyFlatData[float32](b.Labels[0])[0])
	return nil
}

// seededRun is a trainer created with Config.Seed, not yet run.
type seededRun struct {
	tr    *volt.Trainer
	order *orderRecorder
}

func newSeededRun(t *testing.T, seed uint64) seededRun {
	t.Helper()
	rec := &orderRecorder{}
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 2, Seed: volt.Ptr(seed), Callbacks: []volt.Callback{rec}}))
	return seededRun{tr, rec}
}

// The seed belongs to the trainer: trainers with different Config.Seed in
// one process, run in any order, initialise and shuffle differently; the
// same seed gives bitwise-equal weights and the same data order; the
// process-wide default is neither used nor changed.
func TestTrainerSeedIsPerTrainer(t *testing.T) {
	volt.SeedEverything(99)
	t.Cleanup(func() { volt.SeedEverything(0) })
	// Created first, run last: a process-global seed set by the later
	// trainers would leak into it.
	a1, b, a2 := newSeededRun(t, 1), newSeededRun(t, 2), newSeededRun(t, 1)
	for _, r := range []seededRun{b, a2, a1} {
		if err := r.tr.Fit(t.Context(), &boring{}, boringData()); err != nil {
			t.Fatal(err)
		}
	}
	if !equalWeights(weights(t, a1.tr), weights(t, a2.tr)) {
		t.Error("two trainers with Seed 1 trained different weights")
	}
	if !slices.Equal(a1.order.first, a2.order.first) {
		t.Errorf("two trainers with Seed 1 saw different data orders: %v and %v", a1.order.first, a2.order.first)
	}
	if equalWeights(weights(t, a1.tr), weights(t, b.tr)) {
		t.Error("Seed 1 and Seed 2 trained the same weights")
	}
	if slices.Equal(a1.order.first, b.order.first) {
		t.Error("Seed 1 and Seed 2 saw the same data order: the loaders do not use the trainer's seed")
	}
	if got := data.DefaultSeed(); got != 99 {
		t.Errorf("the process-wide seed changed to %d, want 99", got)
	}
	// Without Config.Seed, a trainer takes SeedEverything's seed at creation.
	volt.SeedEverything(1)
	c := seededRun{order: &orderRecorder{}}
	c.tr = testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 2, Callbacks: []volt.Callback{c.order}}))
	volt.SeedEverything(5)
	if err := c.tr.Fit(t.Context(), &boring{}, boringData()); err != nil {
		t.Fatal(err)
	}
	if !equalWeights(weights(t, a1.tr), weights(t, c.tr)) || !slices.Equal(a1.order.first, c.order.first) {
		t.Error("a trainer created after SeedEverything(1) differs from one with Config.Seed 1")
	}
}
