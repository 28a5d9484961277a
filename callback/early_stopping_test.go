package callback_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// scripted is the boring model logging score[epoch] (the last value after
// the script ends) at the end of each validation run.
type scripted struct {
	*boring
	score []float64
}

func scriptAt(score []float64, epoch int) float64 { return score[min(epoch, len(score)-1)] }

func (m *scripted) OnValidationEpochEnd(t *volt.Trainer) error {
	t.Log("score", scriptAt(m.score, t.CurrentEpoch()))
	return nil
}

// trainScore logs score[epoch] at each training batch end, so the value is
// visible at OnTrainEpochEnd without validation.
type trainScore struct{ score []float64 }

func (s trainScore) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	t.Log("score", scriptAt(s.score, t.CurrentEpoch()))
	return nil
}

func TestEarlyStoppingStopsAtTheRightEpoch(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name       string
		cfg        callback.EarlyStoppingConfig
		trainCfg   volt.Config
		score      []float64
		trainOnly  bool // score from training batches, no validation
		wantEpochs int  // epochs completed
		wantStop   int  // StoppedEpoch
	}{
		{"min mode", callback.EarlyStoppingConfig{Patience: 2}, volt.Config{}, []float64{5, 4, 3, 3.5, 3.2, 1}, false, 5, 4},
		{"max mode", callback.EarlyStoppingConfig{Patience: 2, Mode: "max"}, volt.Config{}, []float64{1, 2, 3, 2, 2.5, 9}, false, 5, 4},
		{"default patience 3", callback.EarlyStoppingConfig{}, volt.Config{}, []float64{5, 6, 6, 6, 1}, false, 4, 3},
		{"patience 1", callback.EarlyStoppingConfig{Patience: 1}, volt.Config{}, []float64{5, 6}, false, 2, 1},
		{"improving keeps going", callback.EarlyStoppingConfig{Patience: 1}, volt.Config{MaxEpochs: 6}, []float64{6, 5, 4, 3, 2, 1}, false, 6, 0},
		{"min_delta: small gains do not count", callback.EarlyStoppingConfig{Patience: 2, MinDelta: 0.5}, volt.Config{}, []float64{5, 4.8, 4.6, 4.4, 4.2}, false, 3, 2},
		{"min_delta: large gains count", callback.EarlyStoppingConfig{Patience: 2, MinDelta: 0.5}, volt.Config{}, []float64{5, 4.4, 3.8, 3.7, 3.6}, false, 5, 4},
		{"max mode min_delta", callback.EarlyStoppingConfig{Patience: 1, Mode: "max", MinDelta: 1}, volt.Config{}, []float64{1, 2.5, 3}, false, 3, 2},
		{"stopping threshold", callback.EarlyStoppingConfig{StoppingThreshold: volt.Ptr(2.5)}, volt.Config{}, []float64{5, 4, 3, 2, 1}, false, 4, 3},
		{"divergence threshold", callback.EarlyStoppingConfig{DivergenceThreshold: volt.Ptr(10.0)}, volt.Config{}, []float64{5, 4, 11, 1}, false, 3, 2},
		{"non-finite", callback.EarlyStoppingConfig{Patience: 10}, volt.Config{}, []float64{5, nan, 1}, false, 2, 1},
		{"infinite", callback.EarlyStoppingConfig{Patience: 10, Mode: "max"}, volt.Config{}, []float64{5, math.Inf(1)}, false, 2, 1},
		{"non-finite unchecked counts as no improvement", callback.EarlyStoppingConfig{Patience: 3, CheckFinite: volt.Ptr(false)}, volt.Config{}, []float64{5, nan}, false, 4, 3},
		{"MinEpochs delays the stop", callback.EarlyStoppingConfig{Patience: 1}, volt.Config{MinEpochs: 5}, []float64{5, 6}, false, 5, 4},
		{"train epoch end without validation", callback.EarlyStoppingConfig{Patience: 2}, volt.Config{}, []float64{5, 4, 4, 4, 1}, true, 4, 3},
		{"validation every 2 epochs", callback.EarlyStoppingConfig{Patience: 2}, volt.Config{CheckValEveryNEpoch: 2}, []float64{0, 5, 0, 6, 0, 7, 0}, false, 6, 5},
		{"validation every 2 epochs, no sanity check", callback.EarlyStoppingConfig{Patience: 2}, volt.Config{CheckValEveryNEpoch: 2, NumSanityValSteps: volt.Ptr(0)}, []float64{0, 5, 0, 6, 0, 7, 0}, false, 6, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Monitor = "score"
			es := callback.NewEarlyStopping(tc.cfg)
			cfg := tc.trainCfg
			if cfg.MaxEpochs == 0 {
				cfg.MaxEpochs = 20
			}
			var m volt.Module = &scripted{boring: &boring{}, score: tc.score}
			dm := boringData()
			var cbs []volt.Callback
			if tc.trainOnly {
				m, dm = &boring{}, trainOnly()
				cbs = append(cbs, trainScore{tc.score})
			}
			tr, err := fit(t, quiet(cfg), m, dm, append(cbs, es)...)
			if err != nil {
				t.Fatal(err)
			}
			if tr.CurrentEpoch() != tc.wantEpochs || es.StoppedEpoch() != tc.wantStop {
				t.Errorf("trained %d epochs, stopped epoch %d; want %d and %d (wait %d, best %v)",
					tr.CurrentEpoch(), es.StoppedEpoch(), tc.wantEpochs, tc.wantStop, es.WaitCount(), es.BestScore())
			}
		})
	}
}

func TestEarlyStoppingMissingMetric(t *testing.T) {
	tests := []struct {
		name    string
		strict  *bool
		wantErr string
	}{
		{"strict by default", nil, `EarlyStopping conditioned on metric "nope" which is not available; available metrics: score, train_loss, val_loss`},
		{"not strict", volt.Ptr(false), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			es := callback.NewEarlyStopping(callback.EarlyStoppingConfig{Monitor: "nope", Strict: tc.strict})
			var logs bytes.Buffer
			tr, err := fit(t, capture(volt.Config{MaxEpochs: 3}, &logs), &scripted{boring: &boring{}, score: []float64{1}}, boringData(), es)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Fit error = %v, want it to contain %q", err, tc.wantErr)
				}
				if tr.CurrentEpoch() != 0 {
					t.Errorf("failed after %d epochs, want at the first check", tr.CurrentEpoch())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(logs.String(), `metric \"nope\" which is not available`); n != 1 {
				t.Errorf("missing metric reported %d times, want once:\n%s", n, logs.String())
			}
			if tr.CurrentEpoch() != 3 {
				t.Errorf("trained %d epochs, want 3", tr.CurrentEpoch())
			}
		})
	}
}

func TestEarlyStoppingReasonSaidOnce(t *testing.T) {
	es := callback.NewEarlyStopping(callback.EarlyStoppingConfig{Monitor: "score", Patience: 1, Verbose: true})
	var logs bytes.Buffer
	if _, err := fit(t, capture(volt.Config{MaxEpochs: 10}, &logs), &scripted{boring: &boring{}, score: []float64{2, 1, 3}}, boringData(), es); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if n := strings.Count(out, "did not improve in the last 1 records"); n != 1 {
		t.Errorf("stop reason said %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(out, "metric score improved by 1 >= min_delta = 0; new best score: 1") {
		t.Errorf("Verbose did not report the improvement:\n%s", out)
	}
}

func TestEarlyStoppingConfigErrors(t *testing.T) {
	tests := []struct {
		cfg  callback.EarlyStoppingConfig
		want string
	}{
		{callback.EarlyStoppingConfig{}, "EarlyStoppingConfig.Monitor: required"},
		{callback.EarlyStoppingConfig{Monitor: "x", Mode: "up"}, `EarlyStoppingConfig.Mode: unknown "up"; valid: "min", "max"`},
		{callback.EarlyStoppingConfig{Monitor: "x", Patience: -1}, "EarlyStoppingConfig.Patience: must be >= 1"},
		{callback.EarlyStoppingConfig{Monitor: "x", MinDelta: -1}, "EarlyStoppingConfig.MinDelta: must be a finite number >= 0"},
		{callback.EarlyStoppingConfig{Monitor: "x", StoppingThreshold: volt.Ptr(math.NaN())}, "EarlyStoppingConfig.StoppingThreshold: must be finite"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			err := callback.NewEarlyStopping(tc.cfg).Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestEarlyStoppingState(t *testing.T) {
	tests := []struct {
		name   string
		score  []float64
		epochs int
	}{
		{"after improvements", []float64{5, 4, 6}, 3},
		{"best is still infinite", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			es := callback.NewEarlyStopping(callback.EarlyStoppingConfig{Monitor: "score", Patience: 5})
			if tc.epochs > 0 {
				if _, err := fit(t, quiet(volt.Config{MaxEpochs: tc.epochs}), &scripted{boring: &boring{}, score: tc.score}, boringData(), es); err != nil {
					t.Fatal(err)
				}
			}
			b, err := es.State()
			if err != nil {
				t.Fatal(err)
			}
			other := callback.NewEarlyStopping(callback.EarlyStoppingConfig{Monitor: "score", Patience: 5})
			if err := other.LoadState(b); err != nil {
				t.Fatalf("LoadState(%s): %v", b, err)
			}
			if other.BestScore() != es.BestScore() || other.WaitCount() != es.WaitCount() || other.StoppedEpoch() != es.StoppedEpoch() {
				t.Errorf("loaded best %v wait %d stopped %d, want %v %d %d", other.BestScore(), other.WaitCount(), other.StoppedEpoch(),
					es.BestScore(), es.WaitCount(), es.StoppedEpoch())
			}
			if other.StateKey() != "EarlyStopping{monitor=score,mode=min}" {
				t.Errorf("StateKey %q", other.StateKey())
			}
		})
	}
}

func TestEarlyStoppingResetsBetweenFits(t *testing.T) {
	es := callback.NewEarlyStopping(callback.EarlyStoppingConfig{Monitor: "score", Patience: 2})
	m := &scripted{boring: &boring{}, score: []float64{1, 2, 3, 4}}
	testutil.Fit(t, quiet(volt.Config{MaxEpochs: 20, Callbacks: []volt.Callback{es}}), m, boringData())
	if es.WaitCount() != 2 {
		t.Fatalf("wait %d after the first fit, want 2", es.WaitCount())
	}
	// A fresh trainer with the same callback starts from scratch.
	testutil.Fit(t, quiet(volt.Config{MaxEpochs: 1, Callbacks: []volt.Callback{es}}), m, boringData())
	if es.WaitCount() != 0 || es.BestScore() != 1 {
		t.Errorf("after a second fit: wait %d best %v, want 0 and 1", es.WaitCount(), es.BestScore())
	}
}
