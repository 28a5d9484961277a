package volt_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// logsNonFinite logs a NaN and an infinity at every training batch end.
type logsNonFinite struct{}

func (logsNonFinite) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	t.Log("nan_metric", math.NaN())
	t.Log("inf_metric", math.Inf(1))
	return nil
}

// knownBug3 marks issue 11's bug 3 as still present: a NaN or an infinity in
// any logged metric makes every checkpoint save fail ("json: unsupported
// value: NaN"), the SIGTERM checkpoint included. The fix belongs in
// checkpointing.go: trainerState's metric maps (CallbackMetrics,
// LoggedMetrics, ProgBarMetrics) and metricState's floats must be encoded
// with a type that keeps NaN and ±Inf (as strings, like callback's score),
// in snapshot and restoreState. Whoever fixes it sets this to false; until
// then the test checks that the failure is still exactly this one.
const knownBug3 = true

// TestCheckpointKeepsNonFiniteMetrics: a checkpoint of a run that logged NaN
// and +Inf saves, and a resumed run sees the same values.
func TestCheckpointKeepsNonFiniteMetrics(t *testing.T) {
	tr, err := volt.NewTrainer(quiet(volt.Config{MaxEpochs: 1, DisableCheckpointing: true, Callbacks: []volt.Callback{logsNonFinite{}}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Fit(t.Context(), &boring{}, boringData()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nonfinite.ckpt")
	err = tr.SaveCheckpoint(path, false)
	if knownBug3 {
		if err == nil || !strings.Contains(err.Error(), "unsupported value") {
			t.Fatalf("issue 11 bug 3 no longer fails as listed (error %v): set knownBug3 to false", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("SaveCheckpoint with non-finite metrics: %v", err)
	}
	resumed, err := volt.NewTrainer(quiet(volt.Config{MaxEpochs: 2, DisableCheckpointing: true}))
	if err != nil {
		t.Fatal(err)
	}
	if err := resumed.Fit(t.Context(), &boring{}, boringData(), volt.FromCheckpoint(path)); err != nil {
		t.Fatal(err)
	}
	m := resumed.CallbackMetrics()
	if !math.IsNaN(m["nan_metric"]) || !math.IsInf(m["inf_metric"], 1) {
		t.Errorf("restored nan_metric=%v inf_metric=%v, want NaN and +Inf", m["nan_metric"], m["inf_metric"])
	}
}
