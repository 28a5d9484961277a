package callback_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
)

// valAtStep records the monitored value after every Fit validation run,
// with the global step it ran at.
type valAtStep struct {
	steps  []int64
	values []float64
}

func (r *valAtStep) OnValidationEnd(t *volt.Trainer) error {
	if t.State().Stage != volt.RunningSanityCheck {
		r.steps = append(r.steps, t.GlobalStep())
		r.values = append(r.values, t.CallbackMetrics()["val_loss"])
	}
	return nil
}

// latestAt returns the value of the last validation that ran at global step
// s or before.
func (r *valAtStep) latestAt(s int64) (float64, bool) {
	for i := len(r.steps) - 1; i >= 0; i-- {
		if r.steps[i] <= s {
			return r.values[i], true
		}
	}
	return 0, false
}

// TestStepCheckpointRanksWithTheValidationAfterItsBatch: a checkpoint that
// EveryNTrainSteps triggers after a batch that a validation follows is
// saved after that validation, with its value (Lightning 2.5.5, PR #21106;
// volt saved it before, with the previous validation's value or none); one
// triggered before the Fit's first validation, when the monitored value is
// not logged yet, waits for it.
func TestStepCheckpointRanksWithTheValidationAfterItsBatch(t *testing.T) {
	cases := []struct {
		name  string
		cfg   volt.Config
		every int
		steps []int64 // of the files saved
	}{
		{"validation every 2 batches", volt.Config{MaxEpochs: 1, ValCheckInterval: volt.Batches(2)}, 2, []int64{2, 4, 6, 8}},
		{"validation once per epoch", volt.Config{MaxEpochs: 2}, 8, []int64{8, 16}},
		// Validations after batches 3 and 5 (steps 2 and 3): step 3's
		// checkpoint waits for the second.
		{"validation waits for the accumulation window", volt.Config{MaxEpochs: 1, AccumulateGradBatches: 2, ValCheckInterval: volt.Batches(3)}, 3, []int64{3}},
		// Steps 1-3 have no val_loss yet: saved with step 4's validation;
		// steps 5-7 rank with it, the latest.
		{"monitored value not logged yet", volt.Config{MaxEpochs: 1, ValCheckInterval: volt.Batches(4)}, 1, []int64{4, 5, 6, 7, 8}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			mc := newCkpt(t, callback.ModelCheckpointConfig{Dirpath: dir, Monitor: "val_loss", SaveTopK: volt.Ptr(-1),
				EveryNTrainSteps: c.every, Filename: "{step}"})
			rec := &valAtStep{}
			cfg := quiet(c.cfg)
			cfg.NumSanityValSteps = volt.Ptr(0)
			if _, err := fit(t, cfg, &ckptAdam{}, ckptData(), rec, mc); err != nil {
				t.Fatal(err)
			}
			var steps []int64
			for path, score := range mc.BestKModels() {
				var s int64
				if _, err := fmt.Sscanf(strings.TrimSuffix(filepath.Base(path), ".ckpt"), "step=%d", &s); err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				steps = append(steps, s)
				want, ok := rec.latestAt(s)
				if !ok || score != want {
					t.Errorf("step %d ranked with val_loss %v; the validation after its batch gave %v (validations at steps %v: %v)",
						s, score, want, rec.steps, rec.values)
				}
			}
			slices.Sort(steps)
			if !slices.Equal(steps, c.steps) {
				t.Errorf("checkpoints at steps %v, want %v (validations at steps %v)", steps, c.steps, rec.steps)
			}
		})
	}
}
