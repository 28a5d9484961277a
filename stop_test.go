package volt_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// stopAt asks to stop at the end of a given epoch.
type stopAt struct{ epoch int }

func (s stopAt) OnTrainEpochEnd(t *volt.Trainer) error {
	if t.CurrentEpoch() >= s.epoch {
		t.Stop("test asked")
	}
	return nil
}

// stopAtBatch asks to stop after a given batch of the first epoch.
type stopAtBatch struct{ batch int }

func (s stopAtBatch) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, i int) error {
	if t.CurrentEpoch() == 0 && i == s.batch {
		t.Stop("test asked")
	}
	return nil
}

// skipAfter ends every epoch before batch n.
type skipAfter struct{ n int }

func (s skipAfter) OnTrainBatchStart(t *volt.Trainer, _ *data.Batch, i int) error {
	if i == s.n {
		t.SkipRestOfEpoch()
	}
	return nil
}

// cancelAt cancels the run's context after a number of optimization steps.
type cancelAt struct {
	step   int64
	cancel context.CancelFunc
}

func (c cancelAt) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	if t.GlobalStep() == c.step {
		c.cancel()
	}
	return nil
}

func TestStopping(t *testing.T) {
	tests := []struct {
		name       string
		cfg        volt.Config
		cb         volt.Callback
		wantEpochs int
		wantSteps  int64
	}{
		{"stop honoured", volt.Config{MaxEpochs: 10}, stopAt{0}, 1, 4},
		{"stop waits for MinEpochs", volt.Config{MaxEpochs: 10, MinEpochs: 3}, stopAt{0}, 3, 12},
		{"stop waits for MinSteps, then ends the epoch", volt.Config{MaxEpochs: 10, MinSteps: 6}, stopAt{0}, 2, 6},
		{"stop mid-epoch honoured", volt.Config{MaxEpochs: 10}, stopAtBatch{1}, 1, 2},
		// Lightning 2.2.5 sets min_epochs=1 when only min_steps is given:
		// a stop in the first epoch waits for its end (generated seed 1204).
		{"MinSteps alone keeps the first epoch", volt.Config{MaxEpochs: 10, MinSteps: 1}, stopAtBatch{1}, 1, 4},
		{"MaxSteps mid-epoch", volt.Config{MaxSteps: 5}, stopAt{100}, 2, 5},
		{"SkipRestOfEpoch", volt.Config{MaxEpochs: 3}, skipAfter{2}, 3, 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := quiet(tc.cfg)
			cfg.Callbacks = []volt.Callback{tc.cb}
			tr := testutil.Fit(t, cfg, &boring{}, boringData())
			if tr.CurrentEpoch() != tc.wantEpochs || tr.GlobalStep() != tc.wantSteps {
				t.Errorf("epochs %d steps %d, want %d and %d", tr.CurrentEpoch(), tr.GlobalStep(), tc.wantEpochs, tc.wantSteps)
			}
		})
	}
}

func TestContextCancelInterrupts(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cfg := quiet(volt.Config{MaxEpochs: 10, Callbacks: []volt.Callback{cancelAt{6, cancel}}})
	tr := testutil.NewTrainer(t, cfg)
	err := tr.Fit(ctx, &boring{}, boringData())
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "fit interrupted at epoch 1, global step 6") {
		t.Fatalf("Fit error = %v", err)
	}
	if tr.State().Status != volt.StatusInterrupted || tr.GlobalStep() != 6 {
		t.Errorf("status %v at step %d", tr.State().Status, tr.GlobalStep())
	}
}

func TestPrecision64(t *testing.T) {
	tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 2, Precision: "64-true"}), &boring{}, boringData())
	for v := range tr.Store().IterVariables() {
		if v.Trainable && v.DType() != dtypes.Float64 {
			t.Errorf("%s is %s under 64-true", v.Path(), v.DType())
		}
	}
}
