package volt_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/logger"
	"github.com/voltml/volt/report"
)

// epochLogging is the boring model logging its loss per step and per epoch.
type epochLogging struct{ testutil.Boring }

func (m *epochLogging) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.Boring.TrainingStep(s, b)
	s.Log("loss", l, volt.OnStep(true), volt.OnEpoch(true))
	return l
}

// errKilled stops the run that the test "kills".
var errKilled = errors.New("killed")

// killAt freezes the run's files at the start of the batch that would take
// global step step+1 (what a SIGKILL there leaves on disk: every byte the
// process wrote, nothing it buffered), then stops the run; the files are put
// back once it has returned (restoreKilled).
type killAt struct {
	step   int64
	root   string
	frozen string
}

func (k *killAt) OnTrainBatchStart(t *volt.Trainer, _ *data.Batch, _ int) error {
	if t.GlobalStep() != k.step {
		return nil
	}
	k.frozen = k.root + ".at-kill"
	if err := os.CopyFS(k.frozen, os.DirFS(k.root)); err != nil {
		return err
	}
	return errKilled
}

// restoreKilled replaces the run's files by those frozen at the kill.
func (k *killAt) restoreKilled(t *testing.T) {
	t.Helper()
	if k.frozen == "" {
		t.Fatalf("the run never reached step %d", k.step)
	}
	if err := os.RemoveAll(k.root); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(k.frozen, k.root); err != nil {
		t.Fatal(err)
	}
}

// TestKilledRunResumesWithEveryLoggedRowOnce: a run with the default CSV
// logger (rows buffered for 100 steps) and a ModelCheckpoint writing
// last.ckpt is killed at a batch start and resumed with
// FromCheckpoint("last"): the run's one metrics.csv then holds every row of
// an uninterrupted run exactly once, with the same values, and there is no
// second version directory (volt report sees one run). Checkpoints are taken in OnTrainBatchEnd (every
// step, before that step's row is sent) or in OnTrainEpochEnd (no
// validation, before the epoch's row is sent). Before the loggers were
// flushed ahead of each checkpoint, the rows since the last epoch end were
// lost for good and the resumed run logged into version_1; before the
// resume point recorded the rows still to send, the checkpoint's own step
// (or epoch) row was lost.
func TestKilledRunResumesWithEveryLoggedRowOnce(t *testing.T) {
	tests := []struct {
		name  string
		mc    callback.ModelCheckpointConfig
		noVal bool
		multi bool    // logger.Multi(CSV, JSONL) in place of the default logger
		kills []int64 // global steps at whose next batch start the run dies
	}{
		// 4 batches per epoch, 12 steps: kills in the first epoch,
		// mid-epoch, at an epoch's first batch and at the last one.
		{"every train step", callback.ModelCheckpointConfig{EveryNTrainSteps: 1, SaveLast: true}, false, false, []int64{1, 6, 8, 11}},
		{"every epoch, no validation", callback.ModelCheckpointConfig{SaveLast: true}, true, false, []int64{5, 8}},
		{"loggers joined by Multi", callback.ModelCheckpointConfig{EveryNTrainSteps: 1, SaveLast: true}, false, true, []int64{6}},
	}
	for _, tt := range tests {
		trainer := func(root string, extra ...volt.Callback) *volt.Trainer {
			t.Helper()
			mc := callback.NewModelCheckpoint(tt.mc)
			cfg := quiet(volt.Config{MaxEpochs: 3, LogEveryNSteps: 1, DefaultRootDir: root, Callbacks: append([]volt.Callback{mc}, extra...)})
			cfg.DisableLoggers = false
			if tt.multi {
				dir, err := logger.VersionDir{SaveDir: root}.Pin()
				if err != nil {
					t.Fatal(err)
				}
				csvLog, err := logger.NewCSV(logger.CSVConfig{}.WithDir(dir))
				if err != nil {
					t.Fatal(err)
				}
				jsonLog, err := logger.NewJSONL(logger.JSONLConfig{}.WithDir(dir))
				if err != nil {
					t.Fatal(err)
				}
				cfg.Loggers = []logger.Logger{logger.Multi(csvLog, jsonLog)}
			}
			tr := testutil.NewTrainer(t, cfg)
			return tr
		}
		loaders := func() volt.Loaders {
			l := boringData()
			if tt.noVal {
				l.Val = nil
			}
			return l
		}
		refRoot := t.TempDir()
		if err := trainer(refRoot).Fit(t.Context(), &epochLogging{}, loaders()); err != nil {
			t.Fatal(err)
		}
		want := testutil.ReadCSV(t, filepath.Join(refRoot, "volt_logs", "version_0", "metrics.csv"))
		for _, step := range tt.kills {
			t.Run(fmt.Sprintf("%s, killed before step %d", tt.name, step+1), func(t *testing.T) {
				root := filepath.Join(t.TempDir(), "run")
				kill := &killAt{step: step, root: root}
				if err := trainer(root, kill).Fit(t.Context(), &epochLogging{}, loaders()); !errors.Is(err, errKilled) {
					t.Fatalf("the run to kill: %v", err)
				}
				kill.restoreKilled(t)
				if err := trainer(root).Fit(t.Context(), &epochLogging{}, loaders(), volt.FromCheckpoint("last")); err != nil {
					t.Fatal(err)
				}
				got := testutil.ReadCSV(t, filepath.Join(root, "volt_logs", "version_0", "metrics.csv"))
				if !slices.EqualFunc(got, want, slices.Equal) {
					t.Errorf("metrics.csv after the kill and resume:\n%s\nwant (uninterrupted):\n%s", testutil.JoinCSV(got), testutil.JoinCSV(want))
				}
				if versions, _ := filepath.Glob(filepath.Join(root, "volt_logs", "version_*")); len(versions) != 1 {
					t.Errorf("version directories %v, want the one run's", versions)
				}
				// volt report volt_logs: one run, one history.
				if runs, _, err := report.Load([]string{filepath.Join(root, "volt_logs")}); err != nil || len(runs) != 1 {
					t.Errorf("volt report finds %d runs (%v), want 1", len(runs), err)
				}
			})
		}
	}
}

// TestFilesWrittenToLogDirBeforeFitStayInTheRun: a program that asks
// LogDir before Fit and writes a file there (a config, a learning-rate
// curve) finds the run's metrics beside it: LogDir claims the directory, so
// Fit does not take that directory for another program's and move on.
func TestFilesWrittenToLogDirBeforeFitStayInTheRun(t *testing.T) {
	root := t.TempDir()
	cfg := quiet(volt.Config{MaxEpochs: 1, DefaultRootDir: root})
	cfg.DisableLoggers = false
	tr := testutil.NewTrainer(t, cfg)
	dir := tr.LogDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("before Fit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := tr.Fit(t.Context(), &boring{}, boringData()); err != nil {
		t.Fatal(err)
	}
	if tr.LogDir() != dir {
		t.Errorf("Fit logged to %s, want %s where the program wrote before it", tr.LogDir(), dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "metrics.csv")); err != nil {
		t.Error(err)
	}
}
