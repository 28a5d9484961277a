package tensorboard

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/voltml/volt/logger"
)

// TestSharedVersionDir checks that CSV, JSONL and TensorBoard loggers
// configured from one pinned logger.VersionDir write into one directory,
// even when an earlier logger has already created it.
func TestSharedVersionDir(t *testing.T) {
	tests := []struct {
		name     string
		existing []string // version dirs created before pinning
		dir      logger.VersionDir
		wantRel  string
	}{
		{"fresh root", nil, logger.VersionDir{}, "volt_logs/version_0"},
		{"next free", []string{"volt_logs/version_0", "volt_logs/version_2"}, logger.VersionDir{}, "volt_logs/version_3"},
		{"custom name", nil, logger.VersionDir{Name: "exp"}, "exp/version_0"},
		{"explicit version", nil, logger.VersionDir{Version: intPtr(7)}, "volt_logs/version_7"},
		{"version name", nil, logger.VersionDir{VersionName: "baseline"}, "volt_logs/baseline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range tt.existing {
				must(t, os.MkdirAll(filepath.Join(root, d), 0o755))
			}
			tt.dir.SaveDir = root
			dir, err := tt.dir.Pin()
			must(t, err)
			csvLog, err := logger.NewCSV(logger.CSVConfig{FlushEvery: 1}.WithDir(dir))
			must(t, err)
			// The CSV logger creates the directory before the others exist;
			// the pinned version keeps them from moving on to the next one.
			must(t, csvLog.LogMetrics(map[string]float64{"loss": 1}, 0))
			tb := New(Config{}.WithDir(dir))
			err = tb.Validate()
			must(t, err)
			jsonLog, err := logger.NewJSONL(logger.JSONLConfig{}.WithDir(dir))
			must(t, err)
			want := filepath.Join(root, tt.wantRel)
			for _, d := range []logger.Direr{csvLog, tb, jsonLog} {
				if d.LogDir() != want {
					t.Errorf("%T.LogDir() = %q, want %q", d, d.LogDir(), want)
				}
			}
			all := logger.Multi(csvLog, tb, jsonLog)
			must(t, all.LogMetrics(map[string]float64{"loss": 0.5}, 1))
			must(t, all.Finalize(logger.StatusSuccess))
			for _, name := range []string{logger.MetricsFileName, logger.JSONLMetricsFileName, filepath.Base(tb.EventFile())} {
				if _, err := os.Stat(filepath.Join(want, name)); err != nil {
					t.Errorf("%s not in shared dir: %v", name, err)
				}
			}
		})
	}
}

// TestUnpinnedLoggersAgree checks that loggers built back to back from the
// same unpinned settings resolve the same next free version.
func TestUnpinnedLoggersAgree(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "volt_logs", "version_1"), 0o755))
	csvLog, err := logger.NewCSV(logger.CSVConfig{SaveDir: root})
	must(t, err)
	tb := New(Config{SaveDir: root})
	err = tb.Validate()
	must(t, err)
	if csvLog.LogDir() != tb.LogDir() || tb.Version() != 2 {
		t.Fatalf("CSV dir %q, TensorBoard dir %q (version %d); want both version_2", csvLog.LogDir(), tb.LogDir(), tb.Version())
	}
	// Reusing the CSV logger's version later pins the TensorBoard logger to it.
	must(t, csvLog.LogMetrics(map[string]float64{"a": 1}, 0))
	must(t, csvLog.Save())
	v := csvLog.Version()
	tb2 := New(Config{SaveDir: root, Version: &v})
	err = tb2.Validate()
	must(t, err)
	if tb2.LogDir() != csvLog.LogDir() {
		t.Fatalf("TensorBoard dir %q, want CSV dir %q", tb2.LogDir(), csvLog.LogDir())
	}
}
