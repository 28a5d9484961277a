package volt_test

import (
	"path/filepath"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
)

// TestResumeFromValidationEndCountsThatValidation: a checkpoint saved in
// OnValidationEnd (or OnValidationEpochEnd) of a validation inside Fit
// counts that validation in Progress.ValRuns, so a run resumed from it
// ends with the uninterrupted run's count.
func TestResumeFromValidationEndCountsThatValidation(t *testing.T) {
	for _, val := range []volt.ValInterval{nil, volt.Fraction(0.5)} {
		cfg := quiet(volt.Config{MaxEpochs: 2, ValCheckInterval: val})
		path := filepath.Join(t.TempDir(), "resume.ckpt")
		sv := &saver{path: path, atBatch: 8, when: "validation", mem: &memLogger{}}
		cfg.Callbacks = []volt.Callback{sv}
		u := testutil.Fit(t, cfg, &adamBoring{}, resumeData())
		if !sv.saved {
			t.Fatal("the checkpoint was not saved")
		}
		cfg.Callbacks = nil
		r := testutil.Fit(t, cfg, &adamBoring{}, resumeData(), volt.FromCheckpoint(path))
		if got, want := r.Progress().ValRuns, u.Progress().ValRuns; got != want {
			t.Errorf("ValCheckInterval %v: resumed from the validation end after batch 8, ValRuns = %d; uninterrupted %d", val, got, want)
		}
	}
}
