package volt_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// logsNonFinite logs a NaN and an infinity at every training batch end.
type logsNonFinite struct{}

func (logsNonFinite) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	t.Log("nan_metric", math.NaN())
	t.Log("inf_metric", math.Inf(1))
	return nil
}

// TestCheckpointKeepsNonFiniteMetrics: a checkpoint of a run that logged NaN
// and +Inf saves, and a resumed run sees the same values.
func TestCheckpointKeepsNonFiniteMetrics(t *testing.T) {
	tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 1, DisableCheckpointing: true, Callbacks: []volt.Callback{logsNonFinite{}}}), &boring{}, boringData())
	path := filepath.Join(t.TempDir(), "nonfinite.ckpt")
	if err := tr.SaveCheckpoint(path, false); err != nil {
		t.Fatalf("SaveCheckpoint with non-finite metrics: %v", err)
	}
	resumed := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 2, DisableCheckpointing: true}), &boring{}, boringData(), volt.FromCheckpoint(path))
	m := resumed.CallbackMetrics()
	if !math.IsNaN(m["nan_metric"]) || !math.IsInf(m["inf_metric"], 1) {
		t.Errorf("restored nan_metric=%v inf_metric=%v, want NaN and +Inf", m["nan_metric"], m["inf_metric"])
	}
}
