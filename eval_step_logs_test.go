package volt_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/logger"
)

// evalStepLine logs its loss per step, per epoch and both ways in
// validation and test, and a value per step in OnValidationBatchEnd, as testdata/lightning/logging/eval_steps/eval_step_logs.py
// does in Lightning.
type evalStepLine struct{ exLine }

func (m evalStepLine) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.mse(s, b)
	s.Log("train_loss", l, volt.OnStep(true), volt.OnEpoch(false))
	return l
}

func (m evalStepLine) ValidationStep(s *volt.Step, b volt.Batch) {
	l := m.mse(s, b)
	s.Log("val_both", l, volt.OnStep(true), volt.OnEpoch(true))
	s.Log("val_step_only", l, volt.OnStep(true), volt.OnEpoch(false))
	s.Log("val_epoch_only", l, volt.OnStep(false), volt.OnEpoch(true))
}

func (m evalStepLine) OnValidationBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, idx, _ int) error {
	t.Log("val_step_hook", float64(idx), volt.OnStep(true), volt.OnEpoch(false))
	return nil
}

func (m evalStepLine) TestStep(s *volt.Step, b volt.Batch) {
	l := m.mse(s, b)
	s.Log("test_both", l, volt.OnStep(true), volt.OnEpoch(true))
	s.Log("test_step_only", l, volt.OnStep(true), volt.OnEpoch(false))
}

// rowRecorder records each LogMetrics call as its step and sorted keys, and
// the evaluation step rows with their values (evalRowText).
type rowRecorder struct{ rows, evalRows []string }

func (r *rowRecorder) LogMetrics(m map[string]float64, step int64) error {
	keys := slices.Sorted(maps.Keys(m))
	r.rows = append(r.rows, fmt.Sprintf("%d %v", step, keys))
	if isEvalStepRow(keys) {
		r.evalRows = append(r.evalRows, evalRowText(step, m))
	}
	return nil
}

// evalRowText writes a row as its step and its values to 6 digits.
func evalRowText(step int64, m map[string]float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", step)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, " %s=%.6g", k, m[k])
	}
	return b.String()
}
func (r *rowRecorder) LogHyperparams(map[string]any) error { return nil }
func (r *rowRecorder) Save() error                         { return nil }
func (r *rowRecorder) Finalize(string) error               { return nil }

// evalStepScenario is one run of eval_step_logs.json.
type evalStepScenario struct {
	Name       string       `json:"name"`
	LogEvery   int          `json:"log_every_n_steps"`
	ValLoaders int          `json:"val_loaders"`
	Calls      []string     `json:"calls"`
	CSVHeader  []string     `json:"csv_header"`
	Returned   [][][]string `json:"returned"`
	LogMetrics []struct {
		Call string   `json:"call"`
		Step *int64   `json:"step"`
		Keys []string `json:"keys"`
	} `json:"log_metrics"`
}

// isEvalStepRow reports whether a logged row holds evaluation step values:
// Lightning sends those alone, without "epoch" (the names of the module
// above all say "step").
func isEvalStepRow(keys []string) bool {
	return len(keys) > 0 && !slices.ContainsFunc(keys, func(k string) bool {
		return !isEvalKey(k) || !strings.Contains(k, "_step")
	})
}

// isEvalRow reports whether a logged row holds evaluation values only, of
// steps or of the epoch (with Lightning's "epoch" key).
func isEvalRow(keys []string) bool {
	return slices.ContainsFunc(keys, isEvalKey) && !slices.ContainsFunc(keys, func(k string) bool {
		return !isEvalKey(k) && k != "epoch"
	})
}

func isEvalKey(k string) bool { return strings.HasPrefix(k, "val_") || strings.HasPrefix(k, "test_") }

// evalLoaders returns n of Lightning's evaluation loaders: 3 and 2 batches of 4.
func evalLoaders(n int, seed uint64) []data.Loader {
	return []data.Loader{
		&data.DataLoader{Dataset: exExamples(12, seed), BatchSize: 4},
		&data.DataLoader{Dataset: exExamples(8, seed+1), BatchSize: 4},
	}[:n]
}

// TestEvalStepLogsMatchLightning runs the scenarios of
// testdata/lightning/logging/eval_steps/eval_step_logs.json: the rows of
// evaluation values the loggers get, step rows and epoch rows (their order,
// steps and keys, "epoch" included, with the entry-point calls between
// them), and the evaluation columns of the CSV logger's metrics.csv must be
// Lightning 2.2.5's.
func TestEvalStepLogsMatchLightning(t *testing.T) {
	b, err := os.ReadFile("testdata/lightning/logging/eval_steps/eval_step_logs.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Scenarios []evalStepScenario `json:"scenarios"`
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Scenarios) == 0 {
		t.Fatal("no scenarios in eval_step_logs.json")
	}
	for _, sc := range golden.Scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			var want []string
			for _, c := range sc.LogMetrics {
				switch {
				case c.Call != "":
					want = append(want, c.Call)
				case isEvalRow(c.Keys):
					want = append(want, fmt.Sprintf("%d %v", *c.Step, c.Keys))
				}
			}
			got, header, returned := runEvalStepScenario(t, sc)
			if len(returned) != len(sc.Returned) {
				t.Fatalf("%d Validate/Test results, Lightning's %d", len(returned), len(sc.Returned))
			}
			for i, perLoader := range returned {
				if !slices.EqualFunc(perLoader, sc.Returned[i], slices.Equal) {
					t.Errorf("keys returned by call %d: %q, Lightning's %q", i, perLoader, sc.Returned[i])
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("evaluation step rows:\n got %q\nwant %q", got, want)
			}
			wantCols := slices.DeleteFunc(slices.Clone(sc.CSVHeader), func(k string) bool { return !isEvalKey(k) })
			gotCols := slices.DeleteFunc(header, func(k string) bool { return !isEvalKey(k) })
			slices.Sort(gotCols)
			if !slices.Equal(gotCols, wantCols) {
				t.Errorf("metrics.csv evaluation columns %q, Lightning's %q", gotCols, wantCols)
			}
		})
	}
}

// runEvalStepScenario runs sc in volt with a recording logger and a CSV
// logger; it returns the evaluation step rows (with the calls between them),
// metrics.csv's header and the keys of each loader's results returned by
// each Validate and Test.
func runEvalStepScenario(t *testing.T, sc evalStepScenario) (got, header []string, returned [][][]string) {
	t.Helper()
	dir := t.TempDir()
	csvLog, err := logger.NewCSV(logger.CSVConfig{SaveDir: dir, Name: "."})
	if err != nil {
		t.Fatal(err)
	}
	rec := &rowRecorder{}
	cfg := exQuiet(volt.Config{MaxEpochs: 2, LogEveryNSteps: sc.LogEvery, NumSanityValSteps: volt.Ptr(2)})
	cfg.DisableLoggers, cfg.Loggers = false, []logger.Logger{rec, csvLog}
	trainer := testutil.NewTrainer(t, cfg)
	dm := volt.Loaders{
		Train: &data.DataLoader{Dataset: exExamples(16, 1), BatchSize: 4},
		Val:   evalLoaders(sc.ValLoaders, 2),
		Test:  evalLoaders(sc.ValLoaders, 4),
	}
	m := evalStepLine{}
	ctx := context.Background()
	for _, call := range sc.Calls {
		got = append(got, call)
		rec.rows = rec.rows[:0]
		var results []map[string]float64
		switch call {
		case "fit":
			err = trainer.Fit(ctx, m, dm)
		case "validate":
			results, err = trainer.Validate(ctx, m, dm)
		case "test":
			results, err = trainer.Test(ctx, m, dm)
		default:
			t.Fatalf("unknown call %q in eval_step_logs.json", call)
		}
		if err != nil {
			t.Fatalf("%s: %v", call, err)
		}
		if call != "fit" {
			var keys [][]string
			for _, r := range results {
				keys = append(keys, slices.Sorted(maps.Keys(r)))
			}
			returned = append(returned, keys)
		}
		for _, row := range rec.rows {
			if isEvalRow(rowKeys(row)) {
				got = append(got, row)
			}
		}
	}
	f, err := os.Open(filepath.Join(csvLog.LogDir(), "metrics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	header, err = csv.NewReader(f).Read()
	if err != nil {
		t.Fatal(err)
	}
	return got, header, returned
}

// rowKeys returns the keys of a row recorded by rowRecorder.
func rowKeys(row string) []string {
	_, list, _ := strings.Cut(row, " ")
	return strings.Fields(strings.Trim(list, "[]"))
}
