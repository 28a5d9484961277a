package volt_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/logger"
	"github.com/voltml/volt/logger/tensorboard"
)

// TestEvalStepRowsReachEveryLogger: the rows of evaluation step values
// (steps that go back to 0 after training rows, names with
// /dataloader_idx_N) are written by the CSV, JSONL and TensorBoard loggers;
// the CSV and JSONL files hold the same rows as the loggers were given.
func TestEvalStepRowsReachEveryLogger(t *testing.T) {
	dir := t.TempDir()
	csvLog, err := logger.NewCSV(logger.CSVConfig{SaveDir: dir, Name: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	jsonlLog, err := logger.NewJSONL(logger.JSONLConfig{SaveDir: dir, Name: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	tbLog := tensorboard.New(tensorboard.Config{SaveDir: dir, Name: "tb"})
	err = tbLog.Validate()
	if err != nil {
		t.Fatal(err)
	}
	rec := &rowRecorder{}
	cfg := exQuiet(volt.Config{MaxEpochs: 2, LogEveryNSteps: 1})
	cfg.DisableLoggers, cfg.Loggers = false, []logger.Logger{rec, csvLog, jsonlLog, tbLog}
	trainer := testutil.NewTrainer(t, cfg)
	dm := volt.Loaders{Train: &data.DataLoader{Dataset: exExamples(16, 1), BatchSize: 4}, Val: evalLoaders(2, 2)}
	if err := trainer.Fit(context.Background(), evalStepLine{}, dm); err != nil {
		t.Fatal(err)
	}
	if len(rec.evalRows) != 10 { // 2 validation runs of 3 + 2 batches
		t.Fatalf("the loggers got %d evaluation step rows, want 10: %q", len(rec.evalRows), rec.evalRows)
	}
	tests := []struct {
		name string
		read func(t *testing.T) []string
	}{
		{"csv", func(t *testing.T) []string { return csvEvalRows(t, filepath.Join(csvLog.LogDir(), "metrics.csv")) }},
		{"jsonl", func(t *testing.T) []string {
			return jsonlEvalRows(t, filepath.Join(jsonlLog.LogDir(), "metrics.jsonl"))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.read(t); !slices.Equal(got, rec.evalRows) {
				t.Errorf("rows in the file:\n%q\nthe loggers got:\n%q", got, rec.evalRows)
			}
		})
	}
	t.Run("tensorboard", func(t *testing.T) {
		info, err := os.Stat(tbLog.EventFile())
		if err != nil || info.Size() == 0 {
			t.Errorf("event file %q: %v, %v", tbLog.EventFile(), info, err)
		}
	})
}

// csvEvalRows reads the evaluation step rows of a metrics.csv.
func csvEvalRows(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := records[0]
	var out []string
	for _, r := range records[1:] {
		m := map[string]float64{}
		var step int64
		for i, cell := range r {
			if cell == "" {
				continue
			}
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", path, cell, err)
			}
			if header[i] == "step" {
				step = int64(v)
			} else {
				m[header[i]] = v
			}
		}
		if isEvalStepRow(slices.Sorted(maps.Keys(m))) {
			out = append(out, evalRowText(step, m))
		}
	}
	return out
}

// jsonlEvalRows reads the evaluation step rows of a metrics.jsonl.
func jsonlEvalRows(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line struct {
			Step    int64              `json:"step"`
			Metrics map[string]float64 `json:"metrics"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if isEvalStepRow(slices.Sorted(maps.Keys(line.Metrics))) {
			out = append(out, evalRowText(line.Step, line.Metrics))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
