package volt_test

import (
	"maps"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/logger"
)

// epochLogged is adamBoring logging epoch values: the step's loss on step
// and epoch, and a host value in OnTrainEpochEnd.
type epochLogged struct{ adamBoring }

func (m *epochLogged) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.adamBoring.TrainingStep(s, b)
	s.Log("loss", l, volt.OnStep(true), volt.OnEpoch(true))
	return l
}

func (m *epochLogged) OnTrainEpochEnd(t *volt.Trainer) error {
	t.Log("epoch_end_seen", float64(t.CurrentEpoch()))
	return nil
}

// TestResumeFinishesTheEpochItWasTakenIn: a run resumed from a checkpoint
// taken inside an epoch whose training ended there (MaxSteps reached, the
// last batch of a LimitTrainBatches epoch) runs what the uninterrupted run
// ran after that point and nothing more: the validation still due, that
// epoch's OnTrainEpochEnd and its *_epoch rows, with no extra batch. (It
// used to stop at once on MaxSteps, skipping the epoch's end, and to train
// one batch past the limit.)
func TestResumeFinishesTheEpochItWasTakenIn(t *testing.T) {
	tests := []struct {
		name    string
		cfg     volt.Config
		when    string
		atBatch int64
	}{
		{"MaxSteps reached at a mid-epoch validation, saved at its end", volt.Config{MaxSteps: 12, ValCheckInterval: volt.Fraction(0.5)}, "validation", 12},
		{"MaxSteps reached at a mid-epoch validation, saved before it", volt.Config{MaxSteps: 12, ValCheckInterval: volt.Fraction(0.5)}, "batch", 12},
		{"MaxSteps reached at an epoch's last batch, saved after its validation", volt.Config{MaxSteps: 16}, "validation", 16},
		{"MaxSteps reached mid-epoch, no validation due", volt.Config{MaxSteps: 10}, "batch", 10},
		{"last batch of a limited epoch, saved after its validation", volt.Config{LimitTrainBatches: volt.Batches(5)}, "validation", 5},
		{"last batch of a limited epoch, saved before its validation", volt.Config{LimitTrainBatches: volt.Batches(5)}, "batch", 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.MaxEpochs = 3
			cfg = quiet(cfg)
			cfg.DisableLoggers = false
			path := filepath.Join(t.TempDir(), "resume.ckpt")
			volt.SeedEverything(11)
			defer volt.SeedEverything(0)
			full := &memLogger{}
			sv := &saver{path: path, atBatch: tc.atBatch, when: tc.when, mem: full}
			cfg.Loggers, cfg.Callbacks = []logger.Logger{full}, []volt.Callback{sv}
			u, err := volt.NewTrainer(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := u.Fit(t.Context(), &epochLogged{}, resumeData()); err != nil {
				t.Fatal(err)
			}
			if !sv.saved {
				t.Fatal("the checkpoint was not saved")
			}
			resumed := &memLogger{}
			cfg.Loggers, cfg.Callbacks = []logger.Logger{resumed}, nil
			r, err := volt.NewTrainer(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Fit(t.Context(), &epochLogged{}, resumeData(), volt.FromCheckpoint(path)); err != nil {
				t.Fatal(err)
			}
			if r.GlobalStep() != u.GlobalStep() || r.CurrentEpoch() != u.CurrentEpoch() {
				t.Errorf("resumed run ends at step %d epoch %d, uninterrupted at %d, %d", r.GlobalStep(), r.CurrentEpoch(), u.GlobalStep(), u.CurrentEpoch())
			}
			if !equalWeights(weights(t, u), weights(t, r)) {
				t.Error("weights differ after resuming")
			}
			// LogEveryNSteps is 50: every row after the save point is an
			// epoch's, and the resumed run must log each of them.
			rest, steps := full.rows[sv.mark:], full.steps[sv.mark:]
			if len(rest) == 0 {
				t.Fatal("the uninterrupted run logged nothing after the save point; the case tests nothing")
			}
			if !reflect.DeepEqual(rest, resumed.rows) || !reflect.DeepEqual(steps, resumed.steps) {
				t.Errorf("rows after the save point:\n uninterrupted %v %v\n resumed       %v %v", steps, rest, resumed.steps, resumed.rows)
			}
			if !maps.Equal(u.CallbackMetrics(), r.CallbackMetrics()) {
				t.Errorf("callback metrics at the end (what a last checkpoint records):\n uninterrupted %v\n resumed       %v", u.CallbackMetrics(), r.CallbackMetrics())
			}
		})
	}
}
