package volt_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// pbarKeysLine logs its loss with each on_step/on_epoch combination, as
// testdata/lightning/logging/progress_bar_keys.py does in Lightning.
type pbarKeysLine struct {
	exLine
	midEpoch []string // ProgressBarMetrics' keys at epoch 1, batch 1
}

func (m *pbarKeysLine) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.mse(s, b)
	s.Log("both", l, volt.OnStep(true), volt.OnEpoch(true), volt.ProgBar)
	s.Log("step_only", l, volt.OnStep(true), volt.OnEpoch(false), volt.ProgBar)
	s.Log("epoch_only", l, volt.OnStep(false), volt.OnEpoch(true), volt.ProgBar)
	s.Log("not_in_bar", l, volt.OnStep(true), volt.OnEpoch(true))
	return l
}

func (m *pbarKeysLine) ValidationStep(s *volt.Step, b volt.Batch) {
	l := m.mse(s, b)
	s.Log("val_default", l, volt.ProgBar)
	s.Log("val_both", l, volt.OnStep(true), volt.OnEpoch(true), volt.ProgBar)
}

func (m *pbarKeysLine) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, idx int) error {
	if t.CurrentEpoch() == 1 && idx == 1 {
		m.midEpoch = slices.Sorted(maps.Keys(t.ProgressBarMetrics()))
	}
	return nil
}

// TestProgressBarMetricsKeysMatchLightning compares the names of the values
// in ProgressBarMetrics, CallbackMetrics and LoggedMetrics with those
// Lightning 2.2.5 gives them (testdata/lightning/logging/progress_bar_keys.json).
func TestProgressBarMetricsKeysMatchLightning(t *testing.T) {
	b, err := os.ReadFile("testdata/lightning/logging/progress_bar_keys.json")
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		MidEpoch []string `json:"mid_epoch_1_batch_1"`
		AfterFit struct {
			ProgressBar []string `json:"progress_bar_metrics"`
			Callback    []string `json:"callback_metrics"`
			Logged      []string `json:"logged_metrics"`
		} `json:"after_fit"`
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	// Lightning's logged_metrics reads the latest step values whether or
	// not they reached a logger; volt's LoggedMetrics holds what the loggers
	// got, so every step is sent here.
	trainer := testutil.NewTrainer(t, exQuiet(volt.Config{MaxEpochs: 2, LogEveryNSteps: 1}))
	m := &pbarKeysLine{}
	if err := trainer.Fit(context.Background(), m, exData()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		got, want []string
	}{
		{"ProgressBarMetrics at epoch 1, batch 1", m.midEpoch, want.MidEpoch},
		{"ProgressBarMetrics after Fit", slices.Sorted(maps.Keys(trainer.ProgressBarMetrics())), want.AfterFit.ProgressBar},
		{"CallbackMetrics after Fit", slices.Sorted(maps.Keys(trainer.CallbackMetrics())), want.AfterFit.Callback},
		{"LoggedMetrics after Fit", slices.Sorted(maps.Keys(trainer.LoggedMetrics())), want.AfterFit.Logged},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !slices.Equal(tc.got, tc.want) {
				t.Errorf("keys %v, Lightning's %v", tc.got, tc.want)
			}
		})
	}
}
