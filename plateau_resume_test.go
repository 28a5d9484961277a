package volt_test

import (
	"path/filepath"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
)

// plateauBoring is the boring model with a ReduceLROnPlateau on val_loss
// that reduces the learning rate after every epoch.
type plateauBoring struct{ boring }

func (plateauBoring) ConfigureOptimizers() volt.Optimizers {
	sched, err := optim.NewReduceLROnPlateau(optim.PlateauMin)
	if err != nil {
		panic(err)
	}
	sched.Patience, sched.Threshold = 0, 10 // no epoch improves enough
	return volt.Optimizers{{Optimizer: optim.Adam(0.01), Scheduler: sched, Monitor: "val_loss"}}
}

// TestResumeKeepsPlateauStep: the plateau scheduler steps after
// OnTrainEpochEnd (as in Lightning), after a checkpoint taken there; a run
// resumed from that checkpoint must still train the next epochs with the
// reduced learning rate, as the uninterrupted run does.
func TestResumeKeepsPlateauStep(t *testing.T) {
	for _, atBatch := range []int64{8, 16} { // end of epoch 0, of epoch 1
		cfg := quiet(volt.Config{MaxEpochs: 3})
		path := filepath.Join(t.TempDir(), "resume.ckpt")
		volt.SeedEverything(11)
		defer volt.SeedEverything(0)
		sv := &saver{path: path, atBatch: atBatch, when: "epoch", mem: &memLogger{}}
		cfg.Callbacks = []volt.Callback{sv}
		u, err := volt.NewTrainer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := u.Fit(t.Context(), &plateauBoring{}, resumeData()); err != nil {
			t.Fatal(err)
		}
		cfg.Callbacks = nil
		r, err := volt.NewTrainer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Fit(t.Context(), &plateauBoring{}, resumeData(), volt.FromCheckpoint(path)); err != nil {
			t.Fatal(err)
		}
		if lu, lr := u.LearningRates()[0], r.LearningRates()[0]; lu != lr {
			t.Errorf("saved after batch %d: learning rate %g after resuming, %g uninterrupted", atBatch, lr, lu)
		}
		if !equalWeights(weights(t, u), weights(t, r)) {
			t.Errorf("saved after batch %d: weights differ after resuming", atBatch)
		}
	}
}
