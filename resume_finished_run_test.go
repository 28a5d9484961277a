package volt_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
)

// epochLossModule is the boring model also logging its loss per epoch.
type epochLossModule struct{ boring }

func (m *epochLossModule) TrainingStep(s *volt.Step, b volt.Batch) *volt.Node {
	l := m.boring.TrainingStep(s, b)
	s.Log("loss", l, volt.OnEpoch(true))
	return l
}

// TestResumingAFinishedRunKeepsItsLogs: Fit resumed with
// FromCheckpoint("last") after the run it resumes finished has nothing to
// train, and leaves the run's metrics.csv as it was: the rows after the
// checkpoint (the last epoch's values, when last.ckpt was saved in
// OnTrainEpochEnd before they were sent) are sent again, not dropped.
func TestResumingAFinishedRunKeepsItsLogs(t *testing.T) {
	tests := []struct {
		name string
		ckpt callback.ModelCheckpointConfig
		cfg  volt.Config
	}{
		{"saved in OnTrainEpochEnd", callback.ModelCheckpointConfig{SaveLast: true}, volt.Config{MaxEpochs: 2}},
		{"saved in OnTrainEpochEnd, monitored", callback.ModelCheckpointConfig{SaveLast: true, Monitor: "val_loss"}, volt.Config{MaxEpochs: 2}},
		{"saved at validation end", callback.ModelCheckpointConfig{SaveLast: true, SaveOnTrainEpochEnd: volt.Ptr(false)}, volt.Config{MaxEpochs: 2}},
		{"saved in OnTrainBatchEnd", callback.ModelCheckpointConfig{SaveLast: true, EveryNTrainSteps: 4}, volt.Config{MaxEpochs: 2}},
		{"MaxSteps in mid-epoch", callback.ModelCheckpointConfig{SaveLast: true}, volt.Config{MaxEpochs: 3, MaxSteps: 6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			fit := func(opts ...volt.RunOption) {
				t.Helper()
				cfg := quiet(tc.cfg)
				cfg.DisableLoggers, cfg.DefaultRootDir, cfg.LogEveryNSteps = false, root, 1
				cfg.Callbacks = []volt.Callback{callback.NewModelCheckpoint(tc.ckpt)}
				tr, err := volt.NewTrainer(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if err := tr.Fit(t.Context(), &epochLossModule{}, boringData(), opts...); err != nil {
					t.Fatal(err)
				}
			}
			fit()
			csv := filepath.Join(root, "volt_logs", "version_0", "metrics.csv")
			before, err := os.ReadFile(csv)
			if err != nil {
				t.Fatal(err)
			}
			fit(volt.FromCheckpoint("last"))
			after, err := os.ReadFile(csv)
			if err != nil {
				t.Fatal(err)
			}
			if string(after) != string(before) {
				t.Errorf("metrics.csv after a Fit resumed from the finished run's last.ckpt:\n%s\nthe finished run wrote:\n%s", after, before)
			}
		})
	}
}
