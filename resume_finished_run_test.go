package volt_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/checkpoint"
	"github.com/voltml/volt/internal/testutil"
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

// TestResumeSaysWhenTheCheckpointHasNoLoggerPositions: a checkpoint whose
// "logs" part is missing resumes with the logs started afresh, and says so,
// naming the file (it continued nothing, silently).
func TestResumeSaysWhenTheCheckpointHasNoLoggerPositions(t *testing.T) {
	root := t.TempDir()
	cfg := quiet(volt.Config{MaxEpochs: 1, DefaultRootDir: root})
	cfg.DisableLoggers = false
	tr := testutil.Fit(t, cfg, &epochLossModule{}, boringData())
	saved := filepath.Join(root, "saved.ckpt")
	if err := tr.SaveCheckpoint(saved, false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*checkpoint.File, map[string]any)
		want bool
	}{
		{"intact", func(*checkpoint.File, map[string]any) {}, false},
		{"no logs", func(_ *checkpoint.File, s map[string]any) { delete(s, "logs") }, true},
	} {
		path := filepath.Join(t.TempDir(), "edited.ckpt")
		editCheckpoint(t, saved, path, tc.edit)
		var said bytes.Buffer
		rcfg := volt.Config{MaxEpochs: 2, DefaultRootDir: root, DisableModelSummary: true, EnableProgressBar: volt.Ptr(false),
			Log: slog.New(slog.NewTextHandler(&said, nil))}
		testutil.Fit(t, rcfg, &epochLossModule{}, boringData(), volt.FromCheckpoint(path))
		got := strings.Contains(said.String(), "the checkpoint holds no logger positions") && strings.Contains(said.String(), path)
		if got != tc.want {
			t.Errorf("%s: said the logs start afresh: %v, want %v; the trainer said:\n%s", tc.name, got, tc.want, said.String())
		}
	}
}
