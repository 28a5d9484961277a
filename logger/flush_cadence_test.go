package logger

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
)

// linesOnDisk counts the lines of path (0 when it does not exist).
func linesOnDisk(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for s := bufio.NewScanner(f); s.Scan(); {
		n++
	}
	return n
}

// TestLoggersFlushEveryNStepsWhateverTheLogCadence: with the trainer's
// default cadence (a row every 50 steps) the rows reach the file every
// DefaultFlushEvery (100) steps, Lightning's flush_logs_every_n_steps, so a
// killed run loses at most that; before, the CSV logger waited for 100
// rows (5000 steps) and the JSON lines logger for its buffer to fill.
func TestLoggersFlushEveryNStepsWhateverTheLogCadence(t *testing.T) {
	type logFn func(step int64) error
	tests := []struct {
		name  string
		open  func(t *testing.T, dir string) (logFn, string)
		extra int // lines on disk besides the rows (CSV header)
	}{
		{"csv", func(t *testing.T, dir string) (logFn, string) {
			l, err := NewCSV(CSVConfig{SaveDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			return func(s int64) error { return l.LogMetrics(map[string]float64{"loss": 1}, s) }, filepath.Join(l.LogDir(), MetricsFileName)
		}, 1},
		{"jsonl", func(t *testing.T, dir string) (logFn, string) {
			l, err := NewJSONL(JSONLConfig{SaveDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			return func(s int64) error { return l.LogMetrics(map[string]float64{"loss": 1}, s) }, filepath.Join(l.LogDir(), JSONLMetricsFileName)
		}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			log, path := tc.open(t, t.TempDir())
			// Rows at steps 49, 99, 149, 199, 249 (log_every_n_steps 50).
			wantRows := map[int64]int{49: 0, 99: 2, 149: 2, 199: 4, 249: 4}
			for _, step := range []int64{49, 99, 149, 199, 249} {
				if err := log(step); err != nil {
					t.Fatal(err)
				}
				rows := linesOnDisk(t, path)
				if rows > 0 {
					rows -= tc.extra
				}
				if rows != wantRows[step] {
					t.Errorf("after the row of step %d: %d rows on disk, want %d", step, rows, wantRows[step])
				}
			}
		})
	}
}
