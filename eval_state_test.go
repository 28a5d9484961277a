package volt_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// This file runs the scenarios of testdata/lightning/eval_state (several
// runs on one trainer) and compares what each run starts with and reports
// with real Lightning's.

// evalStateGolden is testdata/lightning/eval_state/eval_state.json.
type evalStateGolden struct {
	Lightning string                       `json:"lightning"`
	Scenarios map[string]evalStateScenario `json:"scenarios"`
}

type evalStateScenario struct {
	Stages      []string         `json:"stages"`
	Events      []evalStateEvent `json:"events"`
	Checkpoints []string         `json:"checkpoints"`
}

// evalStateEvent is one record of eval_state.py's Recorder or of a run's
// return: the metric names the trainer holds, and the values reported.
type evalStateEvent struct {
	At          string               `json:"at"`
	Callback    []string             `json:"callback"`
	Logged      []string             `json:"logged"`
	ProgressBar []string             `json:"progress_bar"`
	Epoch       *int                 `json:"epoch"`
	GlobalStep  *int64               `json:"global_step"`
	ValLoss     *float64             `json:"val_loss"`
	Result      []map[string]float64 `json:"result"`
}

func loadEvalStateGolden(t *testing.T) *evalStateGolden {
	t.Helper()
	path := filepath.Join("testdata", "lightning", "eval_state", "eval_state.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g evalStateGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(g.Scenarios) == 0 {
		t.Fatalf("%s: no scenarios", path)
	}
	return &g
}

// evalStateModule is eval_state.py's Model: the conformance model with its
// values also in the progress bar.
type evalStateModule struct{ *conformanceModule }

func (m evalStateModule) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.mse(s, b)
	s.Log("train_loss", l, volt.OnStep(true), volt.OnEpoch(true), volt.ProgBar)
	return l
}

func (m evalStateModule) ValidationStep(s *volt.Step, b volt.Batch) {
	s.Log("val_loss", m.mse(s, b), volt.ProgBar)
}

func (m evalStateModule) TestStep(s *volt.Step, b volt.Batch) {
	s.Log("test_loss", m.mse(s, b), volt.ProgBar)
}

// evalStateRecorder is eval_state.py's Recorder.
type evalStateRecorder struct{ events *[]evalStateEvent }

func metricKeys(tr *volt.Trainer, at string) evalStateEvent {
	keys := func(m map[string]float64) []string {
		k := make([]string, 0, len(m))
		for name := range m {
			k = append(k, name)
		}
		slices.Sort(k)
		return k
	}
	return evalStateEvent{At: at, Callback: keys(tr.CallbackMetrics()), Logged: keys(tr.LoggedMetrics()),
		ProgressBar: keys(tr.ProgressBarMetrics())}
}

func (r evalStateRecorder) add(e evalStateEvent) { *r.events = append(*r.events, e) }

func (r evalStateRecorder) OnFitStart(t *volt.Trainer) error {
	r.add(metricKeys(t, "on_fit_start"))
	return nil
}

func (r evalStateRecorder) OnValidationStart(t *volt.Trainer) error {
	if t.State().Fn == volt.StageValidate {
		r.add(metricKeys(t, "on_validation_start"))
	}
	return nil
}

func (r evalStateRecorder) OnTestStart(t *volt.Trainer) error {
	r.add(metricKeys(t, "on_test_start"))
	return nil
}

func (r evalStateRecorder) OnPredictStart(t *volt.Trainer) error {
	r.add(metricKeys(t, "on_predict_start"))
	return nil
}

func (r evalStateRecorder) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	if t.GlobalStep() == 3 {
		r.add(metricKeys(t, "on_train_batch_end step 3"))
	}
	return nil
}

func (r evalStateRecorder) OnValidationEpochEnd(t *volt.Trainer) error {
	if t.State().Fn == volt.StageFit && t.State().Stage != volt.RunningSanityCheck {
		v := t.CallbackMetrics()["val_loss"]
		epoch := t.CurrentEpoch()
		r.add(evalStateEvent{At: "fit validation epoch end", Epoch: &epoch, ValLoss: &v})
	}
	return nil
}

// runEvalStateScenario runs sc's stages on one trainer as eval_state.py's
// run does; checkpoints says it has a ModelCheckpoint(EveryNTrainSteps: 3,
// Monitor: "val_loss").
func runEvalStateScenario(t *testing.T, sc evalStateScenario, checkpoints bool) (events []evalStateEvent, files []string) {
	t.Helper()
	init, err := loadConformanceData()
	if err != nil {
		t.Fatal(err)
	}
	es := callback.NewEarlyStopping(callback.EarlyStoppingConfig{Monitor: "val_loss", Patience: 1})
	// LogEveryNSteps 1: volt's LoggedMetrics holds what the loggers
	// received, Lightning's property the latest step values whenever read
	// (docs/from-lightning.md, the trainer.logged_metrics row); sending every
	// step makes the two hold the same names.
	cfg := volt.Config{MaxEpochs: 3, LogEveryNSteps: 1, DisableLoggers: true, DisableModelSummary: true, DisableCheckpointing: true,
		NumSanityValSteps: volt.Ptr(0), DefaultRootDir: t.TempDir(), Log: slog.New(slog.DiscardHandler),
		Callbacks: []volt.Callback{evalStateRecorder{&events}, es}}
	dir := t.TempDir()
	if checkpoints {
		mc := callback.NewModelCheckpoint(callback.ModelCheckpointConfig{Dirpath: dir, EveryNTrainSteps: 3,
			Monitor: "val_loss", SaveTopK: volt.Ptr(-1), Filename: "{step}"})
		cfg.Callbacks, cfg.DisableCheckpointing = append(cfg.Callbacks, mc), false
	}
	tr := testutil.NewTrainer(t, cfg)
	val := &data.DataLoader{Dataset: init.Val8.slice(), BatchSize: 4}
	loaders := volt.Loaders{Train: &data.DataLoader{Dataset: init.Train16.slice(), BatchSize: 4},
		Val: []data.Loader{val}, Test: []data.Loader{val}, Predict: []data.Loader{val}}
	m := evalStateModule{&conformanceModule{hookRecorder: hookRecorder{"Model", &eventLog{}}, init: init}}
	for _, stage := range sc.Stages {
		var res []map[string]float64
		switch stage {
		case "fit":
			err = tr.Fit(t.Context(), m, loaders)
		case "validate":
			res, err = tr.Validate(t.Context(), m, loaders)
		case "test":
			res, err = tr.Test(t.Context(), m, loaders)
		case "predict":
			_, err = tr.Predict(t.Context(), m, loaders)
		default:
			t.Fatalf("unknown stage %q", stage)
		}
		if err != nil {
			t.Fatalf("%s: %v", stage, err)
		}
		e := metricKeys(tr, stage+" returned")
		e.Result = res
		if stage == "fit" {
			epoch, step := tr.CurrentEpoch(), tr.GlobalStep()
			e.Epoch, e.GlobalStep = &epoch, &step
		}
		events = append(events, e)
	}
	if checkpoints {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			files = append(files, e.Name())
		}
	}
	return events, files
}

// reportedValue is a value a scenario reported, named by where.
type reportedValue struct {
	what  string
	value float64
}

// reportedValues lists the values the events report: fit's val_loss per
// epoch, the results of Validate and Test, and where Fit ended.
func reportedValues(events []evalStateEvent) []reportedValue {
	var out []reportedValue
	for _, e := range events {
		switch {
		case e.ValLoss != nil:
			out = append(out, reportedValue{fmt.Sprintf("%s %d: val_loss", e.At, *e.Epoch), *e.ValLoss})
		case e.Result != nil:
			for dl, r := range e.Result {
				for _, k := range slices.Sorted(maps.Keys(r)) {
					out = append(out, reportedValue{fmt.Sprintf("%s, loader %d: %s", e.At, dl, k), r[k]})
				}
			}
		case e.GlobalStep != nil:
			out = append(out, reportedValue{e.At + ": epoch", float64(*e.Epoch)},
				reportedValue{e.At + ": global step", float64(*e.GlobalStep)})
		}
	}
	return out
}

// compareReported returns the first difference between Lightning's values
// and volt's, or "".
func compareReported(want, got []reportedValue) string {
	for i := range max(len(want), len(got)) {
		switch {
		case i >= len(got):
			return fmt.Sprintf("volt reports nothing for Lightning's %s = %.6f", want[i].what, want[i].value)
		case i >= len(want):
			return fmt.Sprintf("volt reports %s = %.6f, Lightning nothing more", got[i].what, got[i].value)
		case want[i].what != got[i].what || !near(want[i].value, got[i].value):
			return fmt.Sprintf("Lightning %s = %.6f, volt %s = %.6f", want[i].what, want[i].value, got[i].what, got[i].value)
		}
	}
	return ""
}

// formatEvalKeys lists the metric names each event saw, as text.
func formatEvalKeys(events []evalStateEvent) []string {
	var out []string
	for _, e := range events {
		if e.ValLoss != nil {
			continue
		}
		out = append(out, fmt.Sprintf("%s: callback [%s] logged [%s] progress bar [%s]", e.At,
			strings.Join(e.Callback, " "), strings.Join(e.Logged, " "), strings.Join(e.ProgressBar, " ")))
	}
	return out
}

// TestEvaluationAfterValidateOrTestUsesTrainedWeights: a Validate or Test
// before Fit does not leave later evaluations (Fit's validation, a later
// Test) on the untrained weights: every scenario reports Lightning's
// losses, and EarlyStopping (patience 1 on val_loss) lets Fit train all its
// epochs as Lightning's does.
func TestEvaluationAfterValidateOrTestUsesTrainedWeights(t *testing.T) {
	g := loadEvalStateGolden(t)
	for _, name := range []string{"fit_test", "validate_fit_test", "test_fit_test", "fit_validate_test_predict_fit"} {
		t.Run(name, func(t *testing.T) {
			sc, ok := g.Scenarios[name]
			if !ok {
				t.Fatalf("eval_state.json has no scenario %q", name)
			}
			events, _ := runEvalStateScenario(t, sc, false)
			if d := compareReported(reportedValues(sc.Events), reportedValues(events)); d != "" {
				t.Errorf("%s: %s", strings.Join(sc.Stages, " → "), d)
			}
		})
	}
}

// TestEachRunStartsWithNoMetrics: as Lightning's Trainer._run, Fit,
// Validate, Test and Predict start with no callback, logged or progress-bar
// metrics from an earlier run, so a ModelCheckpoint(EveryNTrainSteps: 3,
// Monitor: "val_loss") in a Fit after a Validate finds no val_loss at step
// 3 and saves the files Lightning saves.
func TestEachRunStartsWithNoMetrics(t *testing.T) {
	g := loadEvalStateGolden(t)
	for _, c := range []struct {
		name        string
		checkpoints bool
	}{
		{"validate_fit_test", false},
		{"test_fit_test", false},
		{"fit_validate_test_predict_fit", false},
		{"validate_fit_checkpoint_every_3_steps", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc, ok := g.Scenarios[c.name]
			if !ok {
				t.Fatalf("eval_state.json has no scenario %q", c.name)
			}
			events, files := runEvalStateScenario(t, sc, c.checkpoints)
			if d := firstDifference(formatEvalKeys(sc.Events), formatEvalKeys(events)); d != "" {
				t.Errorf("%s: metric names differ from Lightning's: %s", strings.Join(sc.Stages, " → "), d)
			}
			if c.checkpoints && !slices.Equal(files, sc.Checkpoints) {
				t.Errorf("checkpoint files %v, Lightning's %v", files, sc.Checkpoints)
			}
		})
	}
}
