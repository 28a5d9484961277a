package logger

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// resumableLoggers builds, for each Resumable logger of this package, one
// with the next free version under root, and reads back the steps (and
// metric names) of its metrics file.
var resumableLoggers = []struct {
	name  string
	new   func(root string) (Resumable, error)
	steps func(t *testing.T, dir string) ([]int64, []string)
}{
	{"csv", func(root string) (Resumable, error) { return NewCSV(CSVConfig{SaveDir: root, FlushEvery: 1000}) }, csvSteps},
	{"jsonl", func(root string) (Resumable, error) { return NewJSONL(JSONLConfig{SaveDir: root}) }, jsonlSteps},
}

// csvSteps returns the step column and the metric names of dir/metrics.csv.
func csvSteps(t *testing.T, dir string) ([]int64, []string) {
	recs := readCSV(t, filepath.Join(dir, MetricsFileName))
	var steps []int64
	for _, r := range recs[1:] {
		var s int64
		if err := json.Unmarshal([]byte(r[0]), &s); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, s)
	}
	return steps, recs[0][1:]
}

// jsonlSteps returns the steps and the sorted metric names of
// dir/metrics.jsonl.
func jsonlSteps(t *testing.T, dir string) ([]int64, []string) {
	f, err := os.Open(filepath.Join(dir, JSONLMetricsFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps []int64
	names := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line struct {
			Step    int64              `json:"step"`
			Metrics map[string]float64 `json:"metrics"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		steps = append(steps, line.Step)
		for k := range line.Metrics {
			names[k] = true
		}
	}
	var out []string
	for k := range names {
		out = append(out, k)
	}
	slices.Sort(out)
	return steps, out
}

// TestResumedRunLogsEveryRowOnce: a run marks its files at a checkpoint
// (after step 2), logs steps 3 and 4 (the second with a metric seen for
// the first time) and dies with them on disk; a logger of the resumed run,
// given the mark, continues the same directory and file, drops the rows
// after the mark and logs steps 3 to 5 again: every step appears once, and
// the metric only the dead run logged is gone.
func TestResumedRunLogsEveryRowOnce(t *testing.T) {
	for _, tt := range resumableLoggers {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			killed, err := tt.new(root)
			if err != nil {
				t.Fatal(err)
			}
			var mark Position
			for step := range int64(5) {
				row := map[string]float64{"loss": float64(step)}
				if step == 4 {
					row["late"] = 1
				}
				if err := killed.LogMetrics(row, step); err != nil {
					t.Fatal(err)
				}
				if step == 2 {
					if mark, err = killed.Mark(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := killed.Save(); err != nil { // the rows after the mark reached the disk
				t.Fatal(err)
			}
			dir := killed.(Direr).LogDir()

			resumed, err := tt.new(root)
			if err != nil {
				t.Fatal(err)
			}
			ok, err := resumed.Resume(mark)
			if err != nil || !ok {
				t.Fatalf("Resume(%+v) = %v, %v; want true", mark, ok, err)
			}
			if got := resumed.(Direr).LogDir(); got != dir {
				t.Fatalf("resumed LogDir() = %s, want the killed run's %s", got, dir)
			}
			for step := int64(3); step <= 5; step++ {
				if err := resumed.LogMetrics(map[string]float64{"loss": float64(step)}, step); err != nil {
					t.Fatal(err)
				}
			}
			if err := resumed.Finalize(StatusSuccess); err != nil {
				t.Fatal(err)
			}
			steps, names := tt.steps(t, dir)
			if want := []int64{0, 1, 2, 3, 4, 5}; !slices.Equal(steps, want) {
				t.Errorf("steps in the file: %v, want %v", steps, want)
			}
			if want := []string{"loss"}; !slices.Equal(names, want) {
				t.Errorf("metric names: %v, want %v", names, want)
			}
			if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
				t.Errorf("%s holds %d entries, want the one version directory", filepath.Dir(dir), len(entries))
			}
		})
	}
}

// TestResumedRunThatLogsNothingDropsRowsAfterMark: a resumed run that logs
// nothing before finishing still drops what the killed run logged after
// the mark.
func TestResumedRunThatLogsNothingDropsRowsAfterMark(t *testing.T) {
	for _, tt := range resumableLoggers {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			killed, _ := tt.new(root)
			must(t, killed.LogMetrics(map[string]float64{"loss": 0}, 0))
			mark, err := killed.Mark()
			must(t, err)
			must(t, killed.LogMetrics(map[string]float64{"loss": 1}, 1))
			must(t, killed.Save())
			resumed, _ := tt.new(root)
			if ok, err := resumed.Resume(mark); !ok || err != nil {
				t.Fatalf("Resume = %v, %v", ok, err)
			}
			again, err := resumed.Mark() // a checkpoint before anything is logged
			must(t, err)
			if again != mark {
				t.Errorf("Mark before the first write = %+v, want the resumed %+v", again, mark)
			}
			must(t, resumed.Finalize(StatusSuccess))
			if steps, _ := tt.steps(t, mark.Dir); !slices.Equal(steps, []int64{0}) {
				t.Errorf("steps = %v, want [0]", steps)
			}
		})
	}
}

// TestResumeKeepsAGivenOtherDirectory: a logger whose directory was given
// (VersionName) as another one than the checkpoint's does not move.
func TestResumeKeepsAGivenOtherDirectory(t *testing.T) {
	root := t.TempDir()
	l, err := NewCSV(CSVConfig{SaveDir: root, VersionName: "mine"})
	must(t, err)
	ok, err := l.Resume(Position{Dir: filepath.Join(root, DefaultName, "version_0"), File: MetricsFileName, Offset: 3})
	if ok || err != nil {
		t.Fatalf("Resume = %v, %v; want false, nil", ok, err)
	}
	if want := filepath.Join(root, DefaultName, "mine"); l.LogDir() != want {
		t.Errorf("LogDir() = %s, want %s", l.LogDir(), want)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
