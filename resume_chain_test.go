package volt_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/logger"
)

// startSaver writes one checkpoint in the first call of the hook named
// when: a moment of a resumed Fit before it reaches the point it resumes.
type startSaver struct {
	path, when string
	saved      bool
}

func (s *startSaver) save(t *volt.Trainer, when string) error {
	if s.saved || when != s.when {
		return nil
	}
	s.saved = true
	return t.SaveCheckpoint(s.path, false)
}
func (s *startSaver) OnTrainStart(t *volt.Trainer) error      { return s.save(t, "train start") }
func (s *startSaver) OnSanityCheckEnd(t *volt.Trainer) error  { return s.save(t, "sanity check end") }
func (s *startSaver) OnTrainEpochStart(t *volt.Trainer) error { return s.save(t, "train epoch start") }

// TestCheckpointOfAResumedRunBeforeItsPointResumesThere: a run resumed from
// a checkpoint taken inside an epoch (at a validation's end, or at a batch's
// end before its validation) that saves again before it reaches that point
// (in OnTrainStart, at the sanity check's end, in the resumed epoch's
// OnTrainEpochStart) writes a checkpoint that resumes at the same point: a
// run resumed from it ends as the uninterrupted run, with the same rows. (It
// used to resume at the epoch's start, training the epoch again, or to
// forget the validation done and run it twice.)
func TestCheckpointOfAResumedRunBeforeItsPointResumesThere(t *testing.T) {
	for _, first := range []string{"validation", "batch"} {
		for _, second := range []string{"train start", "sanity check end", "train epoch start"} {
			t.Run(first+" then "+second, func(t *testing.T) {
				cfg := quiet(volt.Config{MaxEpochs: 3, ValCheckInterval: volt.Fraction(0.5)})
				cfg.DisableLoggers = false
				dir := t.TempDir()
				path, again := filepath.Join(dir, "first.ckpt"), filepath.Join(dir, "second.ckpt")
				volt.SeedEverything(11)
				defer volt.SeedEverything(0)
				full := &memLogger{}
				sv := &saver{path: path, atBatch: 12, when: first, mem: full}
				cfg.Loggers, cfg.Callbacks = []logger.Logger{full}, []volt.Callback{sv}
				u := testutil.Fit(t, cfg, &epochLogged{}, resumeData())
				ss := &startSaver{path: again, when: second}
				cfg.Loggers, cfg.Callbacks = []logger.Logger{&memLogger{}}, []volt.Callback{ss}
				testutil.Fit(t, cfg, &epochLogged{}, resumeData(), volt.FromCheckpoint(path))
				if !sv.saved || !ss.saved {
					t.Fatalf("checkpoints saved: first %v, second %v", sv.saved, ss.saved)
				}
				resumed := &memLogger{}
				cfg.Loggers, cfg.Callbacks = []logger.Logger{resumed}, nil
				r2 := testutil.Fit(t, cfg, &epochLogged{}, resumeData(), volt.FromCheckpoint(again))
				if r2.GlobalStep() != u.GlobalStep() {
					t.Errorf("resumed twice, the run ends at step %d; uninterrupted at %d", r2.GlobalStep(), u.GlobalStep())
				}
				if !equalWeights(weights(t, u), weights(t, r2)) {
					t.Error("weights differ after resuming twice")
				}
				// LogEveryNSteps is 50: the rows are epoch and validation rows.
				if rest, steps := full.rows[sv.mark:], full.steps[sv.mark:]; !reflect.DeepEqual(rest, resumed.rows) || !reflect.DeepEqual(steps, resumed.steps) {
					t.Errorf("rows after the first save point:\n uninterrupted %v %v\n resumed twice %v %v", steps, rest, resumed.steps, resumed.rows)
				}
			})
		}
	}
}
