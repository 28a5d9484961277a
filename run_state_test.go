package volt_test

import (
	"context"
	"errors"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
)

// failOnValidationStart makes a run fail part-way, so the test sees the run
// state dropped after a failure too.
type failOnValidationStart struct{}

func (failOnValidationStart) OnValidationStart(*volt.Trainer) error { return errors.New("boom") }

// Every run drops its state when it ends, finished or failed: nothing of a
// Fit is left for the next run or the accessors to read.
func TestRunStateIsDroppedAfterEveryRun(t *testing.T) {
	ctx := context.Background()
	dm := boringData()
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1, DisableLoggers: true, DisableCheckpointing: true}))
	m := &boring{}
	runs := []struct {
		name string
		run  func() error
	}{
		{"Fit", func() error { return tr.Fit(ctx, m, dm) }},
		{"Validate", func() error { _, err := tr.Validate(ctx, m, dm); return err }},
		{"Test", func() error { _, err := tr.Test(ctx, m, dm); return err }},
		{"Predict", func() error { _, err := tr.Predict(ctx, m, dm); return err }},
	}
	for _, r := range runs {
		if err := r.run(); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		if volt.RunInProgress(tr) {
			t.Errorf("after %s the trainer still holds the run's state", r.name)
		}
		if n := tr.NumTrainingBatches(); n != -1 {
			t.Errorf("after %s NumTrainingBatches() = %d, want -1", r.name, n)
		}
		if n := tr.NumEvalBatches(); len(n) != 0 {
			t.Errorf("after %s NumEvalBatches() = %v, want none", r.name, n)
		}
	}

	failing := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1, DisableLoggers: true, DisableCheckpointing: true,
		Callbacks: []volt.Callback{failOnValidationStart{}}}))
	if err := failing.Fit(ctx, &boring{}, dm); err == nil {
		t.Fatal("Fit with a failing hook succeeded")
	}
	if volt.RunInProgress(failing) {
		t.Error("after a failed Fit the trainer still holds the run's state")
	}
}
