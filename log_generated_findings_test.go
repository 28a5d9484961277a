package volt_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/logger"
)

// Differences from Lightning 2.2.5 that the generated conformance test
// (version 5, issue 40) found in logging, each checked here on its own.

// neitherStepNorEpoch logs "x" with OnStep(false) and OnEpoch(false) in its
// training step (inStep) or in OnTrainBatchEnd.
type neitherStepNorEpoch struct {
	boring
	inStep bool
}

func (m *neitherStepNorEpoch) TrainingStep(s *volt.Step, b volt.Batch) *volt.Node {
	l := m.boring.TrainingStep(s, b)
	if m.inStep {
		s.Log("x", l, volt.OnStep(false), volt.OnEpoch(false))
	}
	return l
}

func (m *neitherStepNorEpoch) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	if !m.inStep {
		t.Log("x", 1, volt.OnStep(false), volt.OnEpoch(false))
	}
	return nil
}

// TestLogRefusesNeitherStepNorEpoch: a value logged neither per step nor
// per epoch goes nowhere; Lightning refuses it ("self.log(on_step=False,
// on_epoch=False) is not useful", seed 19 of the generated scenarios), so
// Fit fails naming the metric, from a step and from a hook.
func TestLogRefusesNeitherStepNorEpoch(t *testing.T) {
	for _, inStep := range []bool{true, false} {
		tr, err := volt.NewTrainer(quiet(volt.Config{MaxEpochs: 1}))
		if err != nil {
			t.Fatal(err)
		}
		err = tr.Fit(t.Context(), &neitherStepNorEpoch{inStep: inStep}, boringData())
		if err == nil || !strings.Contains(err.Error(), `"x"`) || !strings.Contains(err.Error(), "OnStep(false) and OnEpoch(false)") {
			t.Errorf("in the step %t: Fit returned %v; want an error naming \"x\" and OnStep(false) and OnEpoch(false)", inStep, err)
		}
	}
}

// trainStartLogger logs "start" = 2 in OnTrainStart.
type trainStartLogger struct{ boring }

func (m *trainStartLogger) OnTrainStart(t *volt.Trainer) error {
	t.Log("start", 2)
	return nil
}

// rowSpy keeps every row the loggers get.
type rowSpy struct{ rows []map[string]float64 }

func (r *rowSpy) LogMetrics(m map[string]float64, _ int64) error {
	r.rows = append(r.rows, m)
	return nil
}
func (r *rowSpy) LogHyperparams(map[string]any) error { return nil }
func (r *rowSpy) Save() error                         { return nil }
func (r *rowSpy) Finalize(string) error               { return nil }

var _ logger.Logger = (*rowSpy)(nil)

// TestLogInOnTrainStartIsAFirstEpochValue: as in Lightning 2.2.5 (whose
// training results are emptied when an epoch's row is sent, seeds 44 and 45
// of the generated scenarios), a value logged in OnTrainStart is a value
// of the first epoch: in its row and in CallbackMetrics from its end on,
// and in no later epoch's row.
func TestLogInOnTrainStartIsAFirstEpochValue(t *testing.T) {
	spy := &rowSpy{}
	cfg := quiet(volt.Config{MaxEpochs: 2, Loggers: []volt.Logger{spy}, DisableCheckpointing: true})
	cfg.DisableLoggers = false
	tr, err := volt.NewTrainer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Fit(t.Context(), &trainStartLogger{}, boringData()); err != nil {
		t.Fatal(err)
	}
	var epochs []float64
	for _, r := range spy.rows {
		if _, ok := r["start"]; ok {
			epochs = append(epochs, r["epoch"])
		}
	}
	if !slices.Equal(epochs, []float64{0}) {
		t.Errorf("rows with start: epochs %v, want [0] (rows %v)", epochs, spy.rows)
	}
	if v, ok := tr.CallbackMetrics()["start"]; !ok || v != 2 {
		t.Errorf("CallbackMetrics()[start] = %v, %t; want 2", v, ok)
	}
}

// stepLoggingTwoHeads is twoHeads in manual optimization (two
// OptimizerHandle.Step calls per batch) logging its loss per step.
type stepLoggingTwoHeads struct{ twoHeads }

func (m *stepLoggingTwoHeads) TrainingStep(s *volt.Step, b volt.Batch) *volt.Node {
	l := m.twoHeads.TrainingStep(s, b)
	s.Log("l", l, volt.OnStep(true), volt.OnEpoch(true))
	return l
}

// stepRows keeps the steps at which the loggers got rows, and which.
type stepRows struct {
	rowSpy
	steps []string
	at    []int64
}

func (r *stepRows) LogMetrics(m map[string]float64, step int64) error {
	kind := "epoch"
	if _, ok := m["l_step"]; ok {
		kind = "step"
	}
	r.steps = append(r.steps, fmt.Sprintf("%s@%d", kind, step))
	r.at = append(r.at, step)
	return r.rowSpy.LogMetrics(m, step)
}

// TestManualStepsLogAtBatchesThatStepped: with several optimizer steps per
// batch (manual optimization), the loggers' step and LogEveryNSteps count
// the batches that stepped, as Lightning's _batches_that_stepped does (seed
// 24 of the generated scenarios), while GlobalStep counts every optimizer
// step.
func TestManualStepsLogAtBatchesThatStepped(t *testing.T) {
	spy := &stepRows{}
	cfg := quiet(volt.Config{MaxEpochs: 1, LogEveryNSteps: 2, Loggers: []volt.Logger{spy}, DisableCheckpointing: true})
	cfg.DisableLoggers = false
	tr, err := volt.NewTrainer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Fit(t.Context(), &stepLoggingTwoHeads{twoHeads{manual: true}}, loaderOf(regression(16, 1), 4)); err != nil {
		t.Fatal(err)
	}
	// 4 batches: step rows after batches 1 and 3, the epoch's row at the
	// last batch's step.
	if want := []string{"step@1", "step@3", "epoch@3"}; !slices.Equal(spy.steps, want) {
		t.Errorf("rows %v, want %v", spy.steps, want)
	}
	if tr.GlobalStep() != 8 || tr.Progress().BatchesStepped != 4 {
		t.Errorf("GlobalStep %d, BatchesStepped %d; want 8 and 4", tr.GlobalStep(), tr.Progress().BatchesStepped)
	}
}

// valStepLogger logs its validation loss per step as "v".
type valStepLogger struct{ boring }

func (m *valStepLogger) ValidationStep(s *volt.Step, b volt.Batch) {
	pred := m.Forward(s, b.Input(0))
	l := loss.MeanSquaredError([]*volt.Node{b.Label(0)}, []*volt.Node{pred})
	s.Log("val_loss", l)
	s.Log("v", l, volt.OnStep(true), volt.OnEpoch(false))
}

// TestEvalStepRowsCountFromAReload: the step of a validation step value's
// row counts the loader's batches since the validation loaders were last
// loaded, as Lightning's _seen_batches_per_dataloader (reset when
// ReloadDataloadersEveryNEpochs loads them again, seed 2272 of the generated
// scenarios); without reloads it counts them over the Fit.
func TestEvalStepRowsCountFromAReload(t *testing.T) {
	for _, tc := range []struct {
		reload int
		want   []int64
	}{
		{0, []int64{0, 1, 2, 3, 4, 5}},
		{1, []int64{0, 1, 0, 1, 0, 1}},
		{2, []int64{0, 1, 2, 3, 0, 1}},
	} {
		spy := &stepRows{}
		cfg := quiet(volt.Config{MaxEpochs: 3, NumSanityValSteps: volt.Ptr(0), ReloadDataloadersEveryNEpochs: tc.reload,
			Loggers: []volt.Logger{spy}, DisableCheckpointing: true})
		cfg.DisableLoggers = false
		tr, err := volt.NewTrainer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		val := &data.DataLoader{Dataset: regression(16, 2), BatchSize: 8}
		dm := volt.Loaders{Train: &data.DataLoader{Dataset: regression(16, 1), BatchSize: 8}, Val: []data.Loader{val}}
		if err := tr.Fit(t.Context(), &valStepLogger{}, dm); err != nil {
			t.Fatal(err)
		}
		var got []int64
		for i, r := range spy.rows {
			if _, ok := r["v"]; ok {
				got = append(got, spy.at[i])
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ReloadDataloadersEveryNEpochs %d: v rows at steps %v, want %v", tc.reload, got, tc.want)
		}
	}
}
