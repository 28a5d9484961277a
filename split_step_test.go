package volt_test

import (
	"maps"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
)

// TestSplitStepTrainsLikeFusedStep: training steps compiled as gradients,
// host reduction (here the identity), then apply give bitwise the weights,
// optimizer state and logged values of the fused step, in every precision
// policy and with accumulation.
func TestSplitStepTrainsLikeFusedStep(t *testing.T) {
	for _, precision := range []string{"32-true", "64-true", "bf16-mixed", "16-mixed"} {
		t.Run(precision, func(t *testing.T) {
			run := func(split bool) (map[string][]byte, map[string]float64, int) {
				volt.SeedEverything(5)
				defer volt.SeedEverything(0)
				tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 2, Precision: precision, AccumulateGradBatches: 3, TrackGradNorm: 2}))
				calls := 0
				if split {
					volt.SetGradientReducer(tr, 1, func(g []*tensors.Tensor) ([]*tensors.Tensor, error) { calls++; return g, nil })
				}
				if err := tr.Fit(t.Context(), &boring{}, boringData()); err != nil {
					t.Fatal(err)
				}
				w, err := testutil.Weights(tr.Store())
				if err != nil {
					t.Fatal(err)
				}
				return w, tr.CallbackMetrics(), calls
			}
			fusedW, fusedM, _ := run(false)
			splitW, splitM, calls := run(true)
			if calls != 4 { // 2 epochs × windows {0,1,2} and {3}
				t.Errorf("the reducer ran %d times, want 4 (once per optimization step)", calls)
			}
			for path, w := range fusedW {
				if string(splitW[path]) != string(w) {
					t.Errorf("%s differs between the fused and the split step", path)
				}
			}
			if !maps.Equal(fusedM, splitM) {
				t.Errorf("metrics differ:\nfused %v\nsplit %v", fusedM, splitM)
			}
		})
	}
}
