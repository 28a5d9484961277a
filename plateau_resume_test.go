package volt_test

import (
	"path/filepath"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/optim"
)

// plateauBoring is the boring model with a ReduceLROnPlateau on val_loss
// that reduces the learning rate after every epoch.
type plateauBoring struct {
	boring
	sched *optim.ReduceLROnPlateau // the scheduler ConfigureOptimizers made
}

func (m *plateauBoring) ConfigureOptimizers() volt.Optimizers {
	sched := optim.NewReduceLROnPlateau(optim.PlateauMin)
	sched.Patience, sched.Threshold = -1, 10 // patience 0 (-1: 0 means 10); no epoch improves enough
	m.sched = sched
	return volt.Optimizers{{Optimizer: optim.Adam(0.01), Scheduler: sched, Monitor: "val_loss"}}
}

// unsized hides its loader's length: an iterable loader whose epoch ends
// when it runs out.
type unsized struct{ data.Loader }

func (unsized) NumBatches() int { return -1 }

// TestResumeKeepsPlateauStep: the plateau scheduler steps after
// OnTrainEpochEnd (as in Lightning). A run resumed from a checkpoint taken
// in that epoch after its last batch (at the batch's end, at the end of the
// validation after it, in OnTrainEpochEnd) must still take that step, and
// train the next epochs with the same learning rate and the same scheduler
// state (best, last_epoch) as the uninterrupted run.
func TestResumeKeepsPlateauStep(t *testing.T) {
	tests := []struct {
		name    string
		when    string
		atBatch int64
		sized   bool
	}{
		{"end of epoch 0", "epoch", 8, true},
		{"end of epoch 1", "epoch", 16, true},
		{"last batch of epoch 0", "batch", 8, true},
		{"last batch of epoch 1", "batch", 16, true},
		{"last batch of an epoch of unknown length", "batch", 8, false},
		{"validation after the last batch", "validation", 8, true},
		{"validation after the last batch of an epoch of unknown length", "validation", 8, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dm := resumeData()
			if !tc.sized {
				dm.Train = unsized{dm.Train}
			}
			cfg := quiet(volt.Config{MaxEpochs: 3})
			path := filepath.Join(t.TempDir(), "resume.ckpt")
			volt.SeedEverything(11)
			defer volt.SeedEverything(0)
			sv := &saver{path: path, atBatch: tc.atBatch, when: tc.when, mem: &memLogger{}}
			cfg.Callbacks = []volt.Callback{sv}
			um := &plateauBoring{}
			u := testutil.Fit(t, cfg, um, dm)
			if !sv.saved {
				t.Fatal("the checkpoint was not saved")
			}
			cfg.Callbacks = nil
			rm := &plateauBoring{}
			r := testutil.Fit(t, cfg, rm, dm, volt.FromCheckpoint(path))
			if lu, lr := u.LearningRates()[0], r.LearningRates()[0]; lu != lr {
				t.Errorf("learning rate %g after resuming, %g uninterrupted", lr, lu)
			}
			su, err := um.sched.State()
			if err != nil {
				t.Fatal(err)
			}
			sr, err := rm.sched.State()
			if err != nil {
				t.Fatal(err)
			}
			if string(su) != string(sr) {
				t.Errorf("scheduler state after resuming %s, uninterrupted %s", sr, su)
			}
			if !equalWeights(weights(t, u), weights(t, r)) {
				t.Error("weights differ after resuming")
			}
		})
	}
}
