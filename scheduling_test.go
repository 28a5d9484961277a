package volt_test

import (
	"math"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// scheduled is the boring model with an SGD optimizer and a scheduler.
type scheduled struct {
	boring
	setup volt.OptimizerSetup
}

func (m *scheduled) ConfigureOptimizers() volt.Optimizers { return volt.Optimizers{m.setup} }

// lrRecorder records the learning rate in use at each training batch.
type lrRecorder struct{ lrs []float64 }

func (r *lrRecorder) OnTrainBatchStart(t *volt.Trainer, _ *data.Batch, _ int) error {
	r.lrs = append(r.lrs, t.LearningRates()[0])
	return nil
}

func TestSchedulerStepsPerOptimizationStep(t *testing.T) {
	// 20 optimization steps: with accumulation K, 20*K batches.
	for _, k := range []int{1, 3} {
		newSched := func() optim.Scheduler { s, _ := optim.NewStepLR(3, 0.5); return s }
		// The expected sequence: the scheduler driven by hand, once per step.
		ref := newSched()
		want := []float64{ref.Start(0.1)}
		for range 19 {
			want = append(want, ref.Step(math.NaN()))
		}
		rec := &lrRecorder{}
		m := &scheduled{setup: volt.OptimizerSetup{Optimizer: optim.SGD(0.1), Scheduler: newSched(), Interval: volt.IntervalStep}}
		cfg := volt.Config{MaxSteps: 20, AccumulateGradBatches: k, Callbacks: []volt.Callback{rec}, Precision: "64-true"}
		fitBoring(t, cfg, loaderOf(regression(8*k*20, 1), 8), m)
		if len(rec.lrs) != 20*k {
			t.Fatalf("K=%d: %d batches, want %d", k, len(rec.lrs), 20*k)
		}
		for step, lr := range want {
			for j := range k {
				if got := rec.lrs[step*k+j]; got != lr {
					t.Errorf("K=%d step %d batch %d: lr %v, want %v", k, step, step*k+j, got, lr)
				}
			}
		}
	}
}

func TestSchedulerEpochIntervalAndPlateau(t *testing.T) {
	exp, _ := optim.NewExponentialLR(0.5)
	rec := &lrRecorder{}
	m := &scheduled{setup: volt.OptimizerSetup{Optimizer: optim.SGD(0.1), Scheduler: exp, SchedulerFrequency: 2}}
	fitBoring(t, volt.Config{MaxEpochs: 5, Callbacks: []volt.Callback{rec}, Precision: "64-true"}, boringData(), m)
	// 4 batches per epoch; the LR halves after every second epoch.
	for i, lr := range rec.lrs {
		want := 0.1 * math.Pow(0.5, float64(i/4/2))
		if math.Abs(lr-want) > 1e-15 {
			t.Errorf("batch %d (epoch %d): lr %v, want %v", i, i/4, lr, want)
		}
	}

	plateau, _ := optim.NewReduceLROnPlateau(optim.PlateauMin)
	plateau.Patience = 0
	m = &scheduled{setup: volt.OptimizerSetup{Optimizer: optim.SGD(0.1), Scheduler: plateau, Monitor: "no_such_metric"}}
	tr, _ := volt.NewTrainer(quiet(volt.Config{MaxEpochs: 2}))
	err := tr.Fit(t.Context(), m, boringData())
	if err == nil || !strings.Contains(err.Error(), `monitors "no_such_metric", which was not logged; logged metrics: train_loss, val_loss`) {
		t.Fatalf("Fit error = %v", err)
	}
}
