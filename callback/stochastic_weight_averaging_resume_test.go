package callback_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/optim"
)

// ckptScheduled is ckptAdam with a scheduler: a step-interval StepLR,
// which changes the learning rate within the epochs that averaging sets it
// at the start of, or a ReduceLROnPlateau on val_loss, whose rate at each
// epoch's end averaging replaces at the next epoch's start.
type ckptScheduled struct {
	boring
	plateau bool
}

func (m *ckptScheduled) ConfigureOptimizers() volt.Optimizers {
	if m.plateau {
		sched := optim.NewReduceLROnPlateau(optim.PlateauMin)
		sched.Patience = -1 // patience 0 (the zero value means 10)
		return volt.Optimizers{{Optimizer: optim.Adam(0.01), Scheduler: sched, Interval: volt.IntervalEpoch, Monitor: "val_loss"}}
	}
	sched := optim.NewStepLR(3, 0.5)
	return volt.Optimizers{{Optimizer: optim.Adam(0.01), Scheduler: sched, Interval: volt.IntervalStep}}
}

// lrRecorder records the first optimizer's learning rate at every
// training epoch's end.
type lrRecorder struct{ byEpoch map[int]float64 }

func (r *lrRecorder) OnTrainEpochEnd(t *volt.Trainer) error {
	r.byEpoch[t.CurrentEpoch()] = t.LearningRates()[0]
	return nil
}

// TestStochasticWeightAveragingResumeKeepsTheEpochsRate: a run resumed
// inside an averaging epoch (from a checkpoint taken in OnTrainBatchEnd)
// goes on with the learning rate the checkpoint holds: the one a step
// scheduler changed since averaging set it at the epoch's start (the
// resumed epoch's OnTrainEpochStart does not set it again; at the epoch's
// last batch no step follows to hide the difference), or the one averaging
// set over a plateau scheduler's (the trainer restores the saved rate, not
// the scheduler's).
func TestStochasticWeightAveragingResumeKeepsTheEpochsRate(t *testing.T) {
	tests := []struct {
		name    string
		atBatch int64
		plateau bool
	}{
		{"step scheduler, the averaging epoch's last batch", 16, false},
		{"step scheduler, mid-epoch", 13, false},
		{"plateau scheduler, mid-epoch", 21, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			volt.SeedEverything(3)
			defer volt.SeedEverything(0)
			path := filepath.Join(t.TempDir(), "swa.ckpt")
			newSWA := func() *callback.StochasticWeightAveraging {
				swa := callback.NewStochasticWeightAveraging(callback.StochasticWeightAveragingConfig{SWALRs: []float64{0.002}, StartEpoch: 2, AnnealingEpochs: 3})
				return swa
			}
			full := &lrRecorder{byEpoch: map[int]float64{}}
			sv := &stepSaver{path: path, atBatch: tc.atBatch, when: "batch"}
			if _, err := fit(t, quiet(volt.Config{MaxEpochs: 4}), &ckptScheduled{plateau: tc.plateau}, averagingData(), newSWA(), sv, full); err != nil {
				t.Fatal(err)
			}
			if !sv.saved {
				t.Fatal("the checkpoint was not saved")
			}
			volt.SeedEverything(99)
			resumed := &lrRecorder{byEpoch: map[int]float64{}}
			testutil.Fit(t, quiet(volt.Config{MaxEpochs: 4, Callbacks: []volt.Callback{newSWA(), resumed}}), &ckptScheduled{plateau: tc.plateau}, averagingData(), volt.FromCheckpoint(path))
			// From the epoch it resumes in (8 batches an epoch).
			for epoch := int(tc.atBatch-1) / 8; epoch < 4; epoch++ {
				want, got := full.byEpoch[epoch], resumed.byEpoch[epoch]
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Errorf("epoch %d's end: the resumed run's learning rate %v, the uninterrupted run's %v", epoch, got, want)
				}
			}
		})
	}
}
