package volt_test

import (
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
)

// TestTrainerConfig: Config returns the configuration given, with the seed the
// trainer uses filled in.
func TestTrainerConfig(t *testing.T) {
	seven := uint64(7)
	for _, tc := range []struct {
		name string
		seed *uint64
	}{{"seed given", &seven}, {"default seed", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := testutil.NewTrainer(t, volt.Config{MaxEpochs: 3, Seed: tc.seed, DisableLoggers: true})
			c := tr.Config()
			if c.MaxEpochs != 3 || !c.DisableLoggers {
				t.Errorf("Config() = %+v, want MaxEpochs 3 and DisableLoggers", c)
			}
			if c.Seed == nil || (tc.seed != nil && *c.Seed != *tc.seed) {
				t.Errorf("Config().Seed = %v, want %v", c.Seed, tc.seed)
			}
			again := testutil.NewTrainer(t, c)
			if *again.Config().Seed != *c.Seed {
				t.Errorf("a trainer made from Config() has seed %d, want %d", *again.Config().Seed, *c.Seed)
			}
		})
	}
}

// TestBatchCountsOutsideRuns: NumTrainingBatches is -1 and NumEvalBatches
// empty once Fit returns, as documented (they were the last run's).
func TestBatchCountsOutsideRuns(t *testing.T) {
	tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 1}), &boring{}, boringData())
	if n := tr.NumTrainingBatches(); n != -1 {
		t.Errorf("NumTrainingBatches after Fit = %d, want -1", n)
	}
	if n := tr.NumEvalBatches(); len(n) != 0 {
		t.Errorf("NumEvalBatches after Fit = %v, want none", n)
	}
}
