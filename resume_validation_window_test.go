package volt_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/logger"
)

// TestResumeValidatesAfterTheSameBatch: with accumulation, a validation due
// inside an accumulation window waits for the window's end. A run resumed
// from a checkpoint taken at a batch's end in that window (where the
// validation fell due, or after it) validates after the same batch as the
// uninterrupted run, with the same values. (It used to validate at once
// after resuming, on half-accumulated gradients, or to forget the pending
// validation.)
func TestResumeValidatesAfterTheSameBatch(t *testing.T) {
	// 8 batches per epoch, accumulating 3 (windows 0-2, 3-5, 6-7),
	// validation every 4 batches: due after batches 3 and 7, run after 5
	// and 7. Epoch 1's batch i is batch 9+i of the run.
	tests := []struct {
		name    string
		atBatch int64
		when    string
	}{
		{"at the batch where the validation falls due", 12, "batch"},
		{"at a batch while the validation waits", 13, "batch"},
		{"at the window's end, before the validation", 14, "batch"},
		{"after the validation at the window's end", 14, "validation"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := quiet(volt.Config{MaxEpochs: 2, AccumulateGradBatches: 3, ValCheckInterval: volt.Fraction(0.5)})
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
			if !equalWeights(weights(t, u), weights(t, r)) {
				t.Error("weights differ after resuming")
			}
			// LogEveryNSteps is 50: the rows are validation and epoch rows.
			if rest, steps := full.rows[sv.mark:], full.steps[sv.mark:]; !reflect.DeepEqual(rest, resumed.rows) || !reflect.DeepEqual(steps, resumed.steps) {
				t.Errorf("rows after the save point:\n uninterrupted %v %v\n resumed       %v %v", steps, rest, resumed.steps, resumed.rows)
			}
		})
	}
}
