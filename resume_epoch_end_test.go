package volt_test

import (
	"maps"
	"reflect"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
)

// epochLogged is adamBoring logging epoch values: the step's loss on step
// and epoch, and a host value in OnTrainEpochEnd.
type epochLogged struct{ adamBoring }

func (m *epochLogged) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.adamBoring.TrainingStep(s, b)
	s.Log("loss", l, volt.OnStep(true), volt.OnEpoch(true))
	return l
}

func (m *epochLogged) OnTrainEpochEnd(t *volt.Trainer) error {
	t.Log("epoch_end_seen", float64(t.CurrentEpoch()))
	return nil
}

// TestResumeFinishesTheEpochItWasTakenIn: a run resumed from a checkpoint
// taken inside an epoch whose training ended there (MaxSteps reached, the
// last batch of a LimitTrainBatches epoch) runs what the uninterrupted run
// ran after that point and nothing more: the validation still due, that
// epoch's OnTrainEpochEnd and its *_epoch rows, with no extra batch. (It
// used to stop at once on MaxSteps, skipping the epoch's end, and to train
// one batch past the limit.)
func TestResumeFinishesTheEpochItWasTakenIn(t *testing.T) {
	tests := []struct {
		name    string
		cfg     volt.Config
		when    string
		atBatch int64
	}{
		{"MaxSteps reached at a mid-epoch validation, saved at its end", volt.Config{MaxSteps: 12, ValCheckInterval: volt.Fraction(0.5)}, "validation", 12},
		{"MaxSteps reached at a mid-epoch validation, saved before it", volt.Config{MaxSteps: 12, ValCheckInterval: volt.Fraction(0.5)}, "batch", 12},
		{"MaxSteps reached at an epoch's last batch, saved after its validation", volt.Config{MaxSteps: 16}, "validation", 16},
		{"MaxSteps reached mid-epoch, no validation due", volt.Config{MaxSteps: 10}, "batch", 10},
		{"last batch of a limited epoch, saved after its validation", volt.Config{LimitTrainBatches: volt.Batches(5)}, "validation", 5},
		{"last batch of a limited epoch, saved before its validation", volt.Config{LimitTrainBatches: volt.Batches(5)}, "batch", 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.MaxEpochs = 3
			p := fitAndResume(t, quiet(cfg), func() volt.Module { return &epochLogged{} }, tc.atBatch, tc.when)
			u, r, full, resumed, sv := p.u, p.r, p.full, p.resumed, p.sv
			if r.GlobalStep() != u.GlobalStep() || r.CurrentEpoch() != u.CurrentEpoch() {
				t.Errorf("resumed run ends at step %d epoch %d, uninterrupted at %d, %d", r.GlobalStep(), r.CurrentEpoch(), u.GlobalStep(), u.CurrentEpoch())
			}
			if !equalWeights(weights(t, u), weights(t, r)) {
				t.Error("weights differ after resuming")
			}
			// LogEveryNSteps is 50: every row after the save point is an
			// epoch's, and the resumed run must log each of them.
			rest, steps := full.rows[sv.mark:], full.steps[sv.mark:]
			if len(rest) == 0 {
				t.Fatal("the uninterrupted run logged nothing after the save point; the case tests nothing")
			}
			if !reflect.DeepEqual(rest, resumed.rows) || !reflect.DeepEqual(steps, resumed.steps) {
				t.Errorf("rows after the save point:\n uninterrupted %v %v\n resumed       %v %v", steps, rest, resumed.steps, resumed.rows)
			}
			if !maps.Equal(u.CallbackMetrics(), r.CallbackMetrics()) {
				t.Errorf("callback metrics at the end (what a last checkpoint records):\n uninterrupted %v\n resumed       %v", u.CallbackMetrics(), r.CallbackMetrics())
			}
		})
	}
}
