package callback_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
)

// barModule logs only scripted values: "score" (1, 2, 3, … per epoch) at
// every training batch and "val_score" (10 × epoch) at validation, both to
// the progress bar.
type barModule struct{ boring }

func (m *barModule) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.Forward(s, b.Input(0))})
}

func (m *barModule) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	t.Log("score", float64(t.CurrentEpoch()+1), volt.ProgBar)
	return nil
}

func (m *barModule) OnValidationEpochEnd(t *volt.Trainer) error {
	t.Log("val_score", float64(10*t.CurrentEpoch()), volt.ProgBar)
	return nil
}

func TestProgressBarPlainLines(t *testing.T) {
	tests := []struct {
		name  string
		cfg   volt.Config
		every int
		want  string
	}{
		{"epoch lines", volt.Config{MaxEpochs: 2}, 0,
			"epoch 0/1 step 4 score=1 val_score=0\n" +
				"epoch 1/1 step 8 score=2 val_score=10\n"},
		{"every 3 steps", volt.Config{MaxEpochs: 2}, 3,
			"epoch 0/1 batch 3/4 step 3 score=1\n" +
				"epoch 0/1 step 4 score=1 val_score=0\n" +
				"epoch 1/1 batch 2/4 step 6 score=2 val_score=0\n" +
				"epoch 1/1 step 8 score=2 val_score=10\n"},
		{"accumulation: one line per step", volt.Config{MaxEpochs: 1, AccumulateGradBatches: 2}, 1,
			"epoch 0/0 batch 2/4 step 1 score=1\n" +
				"epoch 0/0 batch 4/4 step 2 score=1\n" +
				"epoch 0/0 step 2 score=1 val_score=0\n"},
		{"no epoch limit", volt.Config{MaxEpochs: -1, MaxSteps: 4}, 0,
			"epoch 0 step 4 score=1 val_score=0\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			pb, err := callback.NewProgressBar(callback.ProgressBarConfig{Writer: &out, Every: tc.every})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fit(t, quiet(tc.cfg), &barModule{}, boringData(), pb); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("output:\n%s\nwant:\n%s", out.String(), tc.want)
			}
			if strings.ContainsAny(out.String(), "\x1b\r") {
				t.Errorf("plain output has control characters: %q", out.String())
			}
		})
	}
}

func TestProgressBarTerminal(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, tr *volt.Trainer) error
		want []string
	}{
		{"fit", func(t *testing.T, tr *volt.Trainer) error { return tr.Fit(t.Context(), &boring{}, boringData()) },
			[]string{"Epoch 0/1:", "Epoch 1/1: loss=", "train_loss=", "4/4", "Validation", "Sanity Checking", "\x1b[1A"}},
		{"validate", func(t *testing.T, tr *volt.Trainer) error {
			_, err := tr.Validate(t.Context(), &boring{}, boringData())
			return err
		}, []string{"Validation", "1/1"}},
		{"test", func(t *testing.T, tr *volt.Trainer) error {
			_, err := tr.Test(t.Context(), &boring{}, boringData())
			return err
		}, []string{"Testing", "2/2"}},
		{"predict", func(t *testing.T, tr *volt.Trainer) error {
			_, err := tr.Predict(t.Context(), &boring{}, boringData())
			return err
		}, []string{"Predicting", "2/2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			pb, err := callback.NewProgressBar(callback.ProgressBarConfig{Writer: &out, ForceTerminal: volt.Ptr(true), RefreshRate: 2})
			if err != nil {
				t.Fatal(err)
			}
			tr, err := volt.NewTrainer(quiet(volt.Config{MaxEpochs: 2, Callbacks: []volt.Callback{pb}}))
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.run(t, tr); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%q", w, out.String())
				}
			}
		})
	}
}

func TestProgressBarNotATerminal(t *testing.T) {
	// A bytes.Buffer has no file descriptor: plain lines without ForceTerminal.
	var out bytes.Buffer
	pb, _ := callback.NewProgressBar(callback.ProgressBarConfig{Writer: &out})
	if _, err := fit(t, quiet(volt.Config{MaxEpochs: 1}), &boring{}, boringData(), pb); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "epoch 0/0 step 4 train_loss=") || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("output %q", out.String())
	}
}

func TestProgressBarConfigErrors(t *testing.T) {
	tests := []struct {
		cfg  callback.ProgressBarConfig
		want string
	}{
		{callback.ProgressBarConfig{RefreshRate: -1}, "ProgressBarConfig.RefreshRate: must be >= 1 (0 means 1), got -1"},
		{callback.ProgressBarConfig{Every: -2}, "ProgressBarConfig.Every: must be >= 0"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if _, err := callback.NewProgressBar(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestProgressBarTerminalStoppedEarly(t *testing.T) {
	// MaxSteps stops the epoch after 2 of its 4 batches: the bar ends at 2/4,
	// not filled up to 4/4.
	var out bytes.Buffer
	pb, err := callback.NewProgressBar(callback.ProgressBarConfig{Writer: &out, ForceTerminal: volt.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fit(t, quiet(volt.Config{MaxEpochs: 1, MaxSteps: 2}), &boring{}, boringData(), pb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "(2/4") || strings.Contains(out.String(), "4/4") || !strings.HasSuffix(out.String(), "\n") {
		t.Errorf("output %q, want the bar left at 2/4 on its own line", out.String())
	}
}
