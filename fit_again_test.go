package volt_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// configureCounter is the boring model counting its ConfigureOptimizers
// calls, recording the learning rate at each training batch, and asking to
// stop at the end of epoch stopAt (-1: never).
type configureCounter struct {
	boring
	calls  int
	stopAt int
	lrs    [][2]float64 // epoch, learning rate
}

func (m *configureCounter) ConfigureOptimizers() volt.Optimizers {
	m.calls++
	return m.boring.ConfigureOptimizers()
}

func (m *configureCounter) OnTrainBatchStart(t *volt.Trainer, _ *data.Batch, _ int) error {
	m.lrs = append(m.lrs, [2]float64{float64(t.CurrentEpoch()), t.LearningRates()[0]})
	return nil
}

func (m *configureCounter) OnTrainEpochEnd(t *volt.Trainer) error {
	if t.CurrentEpoch() == m.stopAt {
		t.Stop("asked by the test")
	}
	return nil
}

// TestEveryFitCallsConfigureOptimizers: as in Lightning, every Fit calls
// ConfigureOptimizers, a second Fit on the same Trainer too, and trains with
// what it returns (testdata/lightning/epoch_end_logs, the fit_* scenarios).
func TestEveryFitCallsConfigureOptimizers(t *testing.T) {
	rec := readEpochEndLogs(t)
	type fitReturned struct {
		Calls      int          `json:"configure_optimizers_calls"`
		Epoch      int          `json:"epoch"`
		GlobalStep int64        `json:"global_step"`
		LRs        [][2]float64 `json:"lrs"`
	}
	tests := []struct {
		scenario string
		stopAt   int
		secondLR float64 // the module's learning rate from the second Fit on (0: unchanged)
	}{
		{"fit_fit", -1, 0},
		{"fit_validate_test_predict_fit", -1, 0},
		{"stopped_fit_then_fit_lr_0.01", 0, 0.01},
	}
	for _, tc := range tests {
		t.Run(tc.scenario, func(t *testing.T) {
			var want struct {
				Stages []string      `json:"stages"`
				Events []fitReturned `json:"events"`
			}
			if err := json.Unmarshal(rec.Scenarios[tc.scenario], &want); err != nil {
				t.Fatal(err)
			}
			m := &configureCounter{boring: boring{LR: 0.1}, stopAt: tc.stopAt}
			tr, err := volt.NewTrainer(quiet(volt.Config{MaxEpochs: 2, NumSanityValSteps: volt.Ptr(0), DisableCheckpointing: true}))
			if err != nil {
				t.Fatal(err)
			}
			dm := boringData()
			var got []fitReturned
			for _, st := range want.Stages {
				switch st {
				case "fit":
					if len(got) > 0 && tc.secondLR != 0 {
						m.LR, m.stopAt = tc.secondLR, -1
					}
					m.lrs = nil
					if err := tr.Fit(t.Context(), m, dm); err != nil {
						t.Fatal(err)
					}
					got = append(got, fitReturned{m.calls, tr.CurrentEpoch(), tr.GlobalStep(), m.lrs})
				case "validate":
					_, err = tr.Validate(t.Context(), m, dm)
				case "test":
					_, err = tr.Test(t.Context(), m, dm)
				case "predict":
					_, err = tr.Predict(t.Context(), m, dm)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			for i, e := range want.Events { // volt's learning rates are float32, the model's dtype
				for j := range e.LRs {
					e.LRs[j][1] = float64(float32(e.LRs[j][1]))
				}
				if len(e.LRs) == 0 {
					want.Events[i].LRs = nil // no batch: [] in the JSON
				}
			}
			if !reflect.DeepEqual(got, want.Events) {
				t.Errorf("after each Fit (ConfigureOptimizers calls, epoch, global step, learning rate per batch):\n got  %s\n want %s (Lightning)", fmt.Sprint(got), fmt.Sprint(want.Events))
			}
		})
	}
}
