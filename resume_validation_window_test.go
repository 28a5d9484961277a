package volt_test

import (
	"reflect"
	"testing"

	"github.com/voltml/volt"
)

// TestResumeValidatesAfterTheSameBatch: with accumulation, a validation due
// inside an accumulation window waits for the window's end. A run resumed
// from a checkpoint taken at a batch's end in that window (where the
// validation fell due, or after it) validates after the same batch as the
// uninterrupted run, with the same values. (It used to validate at once
// after resuming, on half-accumulated gradients, or to forget the pending
// validation.)
func TestResumeValidatesAfterTheSameBatch(t *testing.T) {
	// 8 batches per epoch, accumulating 3 (windows 0-2, 3-5, 6-7),
	// validation every 4 batches: due after batches 3 and 7, run after 5
	// and 7. Epoch 1's batch i is batch 9+i of the run.
	tests := []struct {
		name    string
		atBatch int64
		when    string
	}{
		{"at the batch where the validation falls due", 12, "batch"},
		{"at a batch while the validation waits", 13, "batch"},
		{"at the window's end, before the validation", 14, "batch"},
		{"after the validation at the window's end", 14, "validation"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := quiet(volt.Config{MaxEpochs: 2, AccumulateGradBatches: 3, ValCheckInterval: volt.Fraction(0.5)})
			p := fitAndResume(t, cfg, func() volt.Module { return &epochLogged{} }, tc.atBatch, tc.when)
			u, r, full, resumed, sv := p.u, p.r, p.full, p.resumed, p.sv
			if !equalWeights(weights(t, u), weights(t, r)) {
				t.Error("weights differ after resuming")
			}
			// LogEveryNSteps is 50: the rows are validation and epoch rows.
			if rest, steps := full.rows[sv.mark:], full.steps[sv.mark:]; !reflect.DeepEqual(rest, resumed.rows) || !reflect.DeepEqual(steps, resumed.steps) {
				t.Errorf("rows after the save point:\n uninterrupted %v %v\n resumed       %v %v", steps, rest, resumed.steps, resumed.rows)
			}
		})
	}
}
