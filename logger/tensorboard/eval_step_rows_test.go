package tensorboard

import (
	"maps"
	"slices"
	"testing"

	"github.com/voltml/volt/logger"
)

// TestEvalStepRows: rows of evaluation step values, as the trainer sends
// them (Lightning's way: their step counts evaluation batches, so it goes
// back below the training steps already written, and names may end in
// /dataloader_idx_N), are written in order, each at its own step.
func TestEvalStepRows(t *testing.T) {
	l, _ := newTestLogger(t, Config{})
	rows := []struct {
		metrics map[string]float64
		step    int64
	}{
		{map[string]float64{"train_loss": 1, "epoch": 0}, 0},
		{map[string]float64{"train_loss": 0.5, "epoch": 0}, 1},
		{map[string]float64{"val_loss_step/dataloader_idx_0": 0.75}, 0},
		{map[string]float64{"val_loss_step/dataloader_idx_0": 0.25}, 1},
		{map[string]float64{"val_loss_step/dataloader_idx_1": 2}, 0},
		{map[string]float64{"val_loss_epoch/dataloader_idx_0": 0.5, "val_loss_epoch/dataloader_idx_1": 2, "epoch": 0}, 1},
	}
	var want []scalar
	for _, r := range rows {
		must(t, l.LogMetrics(r.metrics, r.step))
		for _, tag := range slices.Sorted(maps.Keys(r.metrics)) {
			want = append(want, scalar{tag, r.step, float32(r.metrics[tag])})
		}
	}
	must(t, l.Finalize(logger.StatusSuccess))
	if got := scalars(t, readEvents(t, l.EventFile())); !slices.Equal(got, want) {
		t.Errorf("scalars in the event file:\n%+v\nwant:\n%+v", got, want)
	}
}
