package volt_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/optim"
)

// plateauModule is boring with a ReduceLROnPlateau on val_loss.
type plateauModule struct{ boring }

func (*plateauModule) ConfigureOptimizers() volt.Optimizers {
	sched := optim.NewReduceLROnPlateau(optim.PlateauMin)
	return volt.Optimizers{{Optimizer: optim.Adam(0.01), Scheduler: sched, Monitor: "val_loss"}}
}

// lrSetter sets the learning rate before the batch at global step atStep,
// and records the rate after every batch by global step.
type lrSetter struct {
	atStep int64
	lr     float64
	seen   map[int64]float64
}

func (s *lrSetter) OnTrainBatchStart(t *volt.Trainer, _ *data.Batch, _ int) error {
	if t.GlobalStep() == s.atStep {
		return t.SetLearningRate(0, s.lr)
	}
	return nil
}

func (s *lrSetter) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	s.seen[t.GlobalStep()] = t.LearningRates()[0]
	return nil
}

// TestResumeKeepsTheSavedLearningRate: a learning rate set after the
// scheduler's last step (Trainer.SetLearningRate) is the one a run resumed
// from a later checkpoint goes on with, as the uninterrupted run does (and
// as Lightning, which restores the optimizer's rate): the scheduler's rate
// replaces it only at the scheduler's next step, which a checkpoint taken
// in OnTrainEpochEnd already holds.
func TestResumeKeepsTheSavedLearningRate(t *testing.T) {
	tests := []struct {
		name    string
		atBatch int64  // the checkpoint (8 batches an epoch)
		when    string // in OnTrainBatchEnd or OnTrainEpochEnd (saver.when)
	}{
		{"mid-epoch", 5, "batch"},
		{"the epoch's end, before the plateau step", 8, "epoch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "lr.ckpt")
			full := &lrSetter{atStep: 2, lr: 0.003, seen: map[int64]float64{}}
			sv := &saver{path: path, atBatch: tc.atBatch, when: tc.when, mem: &memLogger{}}
			testutil.Fit(t, quiet(volt.Config{MaxEpochs: 2, Callbacks: []volt.Callback{full, sv}}), &plateauModule{}, resumeData())
			if !sv.saved {
				t.Fatal("the checkpoint was not saved")
			}
			resumed := &lrSetter{atStep: 2, lr: 0.003, seen: map[int64]float64{}}
			testutil.Fit(t, quiet(volt.Config{MaxEpochs: 2, Callbacks: []volt.Callback{resumed}}), &plateauModule{}, resumeData(), volt.FromCheckpoint(path))
			for step := sv.step + 1; step <= 16; step++ {
				want, got := full.seen[step], resumed.seen[step]
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Errorf("after step %d: the resumed run's learning rate %v, the uninterrupted run's %v", step, got, want)
				}
			}
		})
	}
}
