package logger

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCSVLazyDirectoryCreation(t *testing.T) {
	tests := []struct {
		name    string
		act     func(l *CSVLogger) error
		wantDir bool
	}{
		{"construction only", func(*CSVLogger) error { return nil }, false},
		{"buffered metrics", func(l *CSVLogger) error { return l.LogMetrics(map[string]float64{"a": 1}, 0) }, false},
		{"save with nothing buffered", func(l *CSVLogger) error { return l.Save() }, false},
		{"finalize with nothing buffered", func(l *CSVLogger) error { return l.Finalize(StatusSuccess) }, false},
		{"save after metrics", func(l *CSVLogger) error {
			return errors.Join(l.LogMetrics(map[string]float64{"a": 1}, 0), l.Save())
		}, true},
		{"hyperparameters", func(l *CSVLogger) error { return l.LogHyperparams(map[string]any{"lr": 0.1}) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			l := newTestCSV(t, CSVConfig{SaveDir: root})
			if err := tt.act(l); err != nil {
				t.Fatal(err)
			}
			_, err := os.Stat(l.LogDir())
			if exists := err == nil; exists != tt.wantDir {
				t.Fatalf("log dir exists = %v, want %v (stat err %v)", exists, tt.wantDir, err)
			}
			_, err = os.Stat(filepath.Join(root, DefaultName))
			if exists := err == nil; exists != tt.wantDir {
				t.Fatalf("name dir exists = %v, want %v", exists, tt.wantDir)
			}
		})
	}
}

// logCall is one LogMetrics call, optionally followed by Save.
type logCall struct {
	metrics map[string]float64
	step    int64
	save    bool
}

func TestCSVMetricsFile(t *testing.T) {
	tests := []struct {
		name  string
		calls []logCall
		want  [][]string
	}{
		{
			name: "single flush sorted header and empty cells",
			calls: []logCall{
				{map[string]float64{"loss": 0.5, "acc": 0.25}, 0, false},
				{map[string]float64{"loss": 0.4}, 1, true},
			},
			want: [][]string{{"step", "acc", "loss"}, {"0", "0.25", "0.5"}, {"1", "", "0.4"}},
		},
		{
			name: "append with unchanged header",
			calls: []logCall{
				{map[string]float64{"loss": 1}, 0, true},
				{map[string]float64{"loss": 2}, 1, true},
				{map[string]float64{}, 2, true},
			},
			want: [][]string{{"step", "loss"}, {"0", "1"}, {"1", "2"}, {"2", ""}},
		},
		{
			name: "header widening keeps flushed rows",
			calls: []logCall{
				{map[string]float64{"train_loss": 1.5}, 0, true},
				{map[string]float64{"train_loss": 1.25}, 1, true},
				{map[string]float64{"val_loss": 2, "a": 3}, 1, false},
				{map[string]float64{"train_loss": 1}, 2, true},
				{map[string]float64{"z": 9}, 3, true},
			},
			want: [][]string{
				{"step", "a", "train_loss", "val_loss", "z"},
				{"0", "", "1.5", "", ""},
				{"1", "", "1.25", "", ""},
				{"1", "3", "", "2", ""},
				{"2", "", "1", "", ""},
				{"3", "", "", "", "9"},
			},
		},
		{
			name: "special floats and quoting",
			calls: []logCall{
				{map[string]float64{"a": math.NaN(), "b": math.Inf(1), "c": math.Inf(-1), "d": 1e-7, "e,f": 1e21, "g": -0.125}, 5, true},
			},
			want: [][]string{{"step", "a", "b", "c", "d", "e,f", "g"}, {"5", "nan", "inf", "-inf", "1e-07", "1e+21", "-0.125"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newTestCSV(t, CSVConfig{SaveDir: t.TempDir()})
			for _, c := range tt.calls {
				if err := l.LogMetrics(c.metrics, c.step); err != nil {
					t.Fatal(err)
				}
				if c.save {
					if err := l.Save(); err != nil {
						t.Fatal(err)
					}
				}
			}
			got := readCSV(t, filepath.Join(l.LogDir(), MetricsFileName))
			if !equalRecords(got, tt.want) {
				t.Fatalf("metrics.csv =\n%q\nwant\n%q", got, tt.want)
			}
			assertNoTempFiles(t, l.LogDir())
		})
	}
}

// assertNoTempFiles fails when dir holds leftover atomic-write temp files.
func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("leftover temp file %s", e.Name())
		}
	}
}

func TestCSVFlushCadence(t *testing.T) {
	tests := []struct {
		name       string
		flushEvery int
		logs       int
		wantRows   int // data rows on disk before Save
	}{
		{"every row", 1, 3, 3},
		{"every two rows", 2, 5, 4},
		{"below threshold", 10, 9, 0},
		{"exactly threshold", 10, 10, 10},
		{"default", 0, 150, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newTestCSV(t, CSVConfig{SaveDir: t.TempDir(), FlushEvery: tt.flushEvery})
			for i := range tt.logs {
				if err := l.LogMetrics(map[string]float64{"x": float64(i)}, int64(i)); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(l.LogDir(), MetricsFileName)
			gotRows := 0
			if _, err := os.Stat(path); err == nil {
				gotRows = len(readCSV(t, path)) - 1
			}
			if gotRows != tt.wantRows {
				t.Fatalf("rows on disk before Save = %d, want %d", gotRows, tt.wantRows)
			}
			if err := l.Save(); err != nil {
				t.Fatal(err)
			}
			if got := len(readCSV(t, path)) - 1; got != tt.logs {
				t.Fatalf("rows on disk after Save = %d, want %d", got, tt.logs)
			}
		})
	}
}

func TestCSVFinalize(t *testing.T) {
	tests := []struct {
		name      string
		statuses  []string
		wantErr   string // substring of the first Finalize's error; "" for none
		wantLines int
	}{
		{"success once", []string{StatusSuccess}, "", 2},
		{"idempotent", []string{StatusSuccess, StatusSuccess, StatusFailed}, "", 2},
		{"interrupted", []string{StatusInterrupted}, "", 2},
		{"invalid status still flushes", []string{"done"}, `"done"`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newTestCSV(t, CSVConfig{SaveDir: t.TempDir()})
			if err := l.LogMetrics(map[string]float64{"loss": 1}, 0); err != nil {
				t.Fatal(err)
			}
			for i, s := range tt.statuses {
				err := l.Finalize(s)
				if i == 0 && tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), StatusSuccess) {
						t.Fatalf("Finalize(%q) = %v, want error containing %q and the valid statuses", s, err, tt.wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatalf("Finalize(%q) call %d: %v", s, i, err)
				}
			}
			if got := len(readCSV(t, filepath.Join(l.LogDir(), MetricsFileName))); got != tt.wantLines {
				t.Fatalf("metrics.csv has %d records, want %d", got, tt.wantLines)
			}
		})
	}
}

func TestCSVWriteErrorsNamePath(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root string) (cfg CSVConfig, wantPath string)
		act   func(l *CSVLogger) error
	}{
		{
			name: "log dir below a regular file",
			setup: func(t *testing.T, root string) (CSVConfig, string) {
				blocker := filepath.Join(root, "blocker")
				if err := os.WriteFile(blocker, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				cfg := CSVConfig{SaveDir: blocker, Version: intPtr(0)}
				return cfg, filepath.Join(blocker, DefaultName, "version_0")
			},
			act: func(l *CSVLogger) error {
				if err := l.LogMetrics(map[string]float64{"a": 1}, 0); err != nil {
					return err
				}
				return l.Save()
			},
		},
		{
			name: "hparams below a regular file",
			setup: func(t *testing.T, root string) (CSVConfig, string) {
				blocker := filepath.Join(root, "blocker")
				if err := os.WriteFile(blocker, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				return CSVConfig{SaveDir: blocker, VersionName: "v"}, filepath.Join(blocker, DefaultName, "v")
			},
			act: func(l *CSVLogger) error { return l.LogHyperparams(map[string]any{"a": 1}) },
		},
		{
			name: "metrics.csv is a directory",
			setup: func(t *testing.T, root string) (CSVConfig, string) {
				mkdirs(t, root, "volt_logs/version_0/metrics.csv/sub")
				return CSVConfig{SaveDir: root, Version: intPtr(0)}, filepath.Join(root, DefaultName, "version_0", MetricsFileName)
			},
			act: func(l *CSVLogger) error { return l.LogMetrics(map[string]float64{"a": 1}, 0) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, wantPath := tt.setup(t, t.TempDir())
			cfg.FlushEvery = 1
			l := newTestCSV(t, cfg)
			err := tt.act(l)
			if err == nil || !strings.Contains(err.Error(), wantPath) {
				t.Fatalf("error = %v, want one naming %s", err, wantPath)
			}
		})
	}
}

func TestCSVFailedFlushKeepsRows(t *testing.T) {
	root := t.TempDir()
	l := newTestCSV(t, CSVConfig{SaveDir: root, Version: intPtr(0)})
	blocked := filepath.Join(l.LogDir(), MetricsFileName, "sub")
	mkdirs(t, l.LogDir(), filepath.Join(MetricsFileName, "sub"))
	if err := l.LogMetrics(map[string]float64{"a": 1}, 0); err != nil {
		t.Fatal(err)
	}
	if err := l.Save(); err == nil {
		t.Fatal("Save with metrics.csv as a directory: want error")
	}
	if err := os.RemoveAll(filepath.Dir(blocked)); err != nil {
		t.Fatal(err)
	}
	if err := l.Save(); err != nil {
		t.Fatalf("retry Save: %v", err)
	}
	want := [][]string{{"step", "a"}, {"0", "1"}}
	if got := readCSV(t, filepath.Join(l.LogDir(), MetricsFileName)); !equalRecords(got, want) {
		t.Fatalf("metrics.csv = %q, want %q", got, want)
	}
}

func TestCSVReplacesStaleMetricsFile(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "volt_logs/version_0")
	stale := filepath.Join(root, "volt_logs", "version_0", MetricsFileName)
	if err := os.WriteFile(stale, []byte("step,old\n0,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := newTestCSV(t, CSVConfig{SaveDir: root, Version: intPtr(0), FlushEvery: 1})
	if err := l.LogMetrics(map[string]float64{"new": 2}, 7); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"step", "new"}, {"7", "2"}}
	if got := readCSV(t, stale); !equalRecords(got, want) {
		t.Fatalf("metrics.csv = %q, want %q", got, want)
	}
}

func TestCSVRecreatesDeletedMetricsFile(t *testing.T) {
	l := newTestCSV(t, CSVConfig{SaveDir: t.TempDir(), FlushEvery: 1})
	path := filepath.Join(l.LogDir(), MetricsFileName)
	if err := l.LogMetrics(map[string]float64{"a": 1}, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := l.LogMetrics(map[string]float64{"a": 2}, 1); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"step", "a"}, {"1", "2"}}
	if got := readCSV(t, path); !equalRecords(got, want) {
		t.Fatalf("metrics.csv = %q, want %q", got, want)
	}
}

func TestCSVRejectsInvalidMetricNames(t *testing.T) {
	tests := []struct {
		name    string
		metrics map[string]float64
	}{
		{"reserved step", map[string]float64{"step": 1, "loss": 2}},
		{"empty name", map[string]float64{"": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newTestCSV(t, CSVConfig{SaveDir: t.TempDir()})
			err := l.LogMetrics(tt.metrics, 0)
			if err == nil || !strings.Contains(err.Error(), MetricsFileName) {
				t.Fatalf("LogMetrics(%v) = %v, want error naming %s", tt.metrics, err, MetricsFileName)
			}
			if len(l.metrics.pending) != 0 || len(l.metrics.keys) != 0 {
				t.Fatalf("rejected call changed state: pending %d, keys %v", len(l.metrics.pending), l.metrics.keys)
			}
		})
	}
}

func TestCSVCopiesMetrics(t *testing.T) {
	l := newTestCSV(t, CSVConfig{SaveDir: t.TempDir()})
	m := map[string]float64{"a": 1}
	if err := l.LogMetrics(m, 0); err != nil {
		t.Fatal(err)
	}
	m["a"] = 99
	if err := l.Save(); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"step", "a"}, {"0", "1"}}
	if got := readCSV(t, filepath.Join(l.LogDir(), MetricsFileName)); !equalRecords(got, want) {
		t.Fatalf("metrics.csv = %q, want %q", got, want)
	}
}
