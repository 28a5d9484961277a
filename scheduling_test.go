package volt_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
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

// schedulers returns a fresh instance of every schedule volt offers.
func schedulers() map[string]func() optim.Scheduler {
	return map[string]func() optim.Scheduler{
		"step":        func() optim.Scheduler { return optim.NewStepLR(3, 0.5) },
		"multistep":   func() optim.Scheduler { return optim.NewMultiStepLR([]int{2, 5, 9}, 0.3) },
		"exponential": func() optim.Scheduler { return optim.NewExponentialLR(0.9) },
		"cosine":      func() optim.Scheduler { return optim.NewCosineAnnealingLR(7, 0.01) },
		"restarts":    func() optim.Scheduler { return optim.NewCosineAnnealingWarmRestarts(4, 2, 0.001) },
		"warmup":      func() optim.Scheduler { return optim.NewLinearWarmup(0.1, 1, 5) },
		"one-cycle":   func() optim.Scheduler { return optim.NewOneCycleLR(0.5, 20) },
		"lambda": func() optim.Scheduler {
			return optim.NewLambdaLR(func(s int) float64 { return 1 / float64(1+s) })
		},
	}
}

func TestSchedulerStepsPerOptimizationStep(t *testing.T) {
	// 20 optimization steps: with accumulation K, 20*K batches. The LR in use
	// at each batch must be the scheduler's value for its optimization step
	// (the optim package's goldens pin those values to PyTorch's).
	for name, newSched := range schedulers() {
		for _, k := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/K=%d", name, k), func(t *testing.T) {
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
					t.Fatalf("%d batches, want %d", len(rec.lrs), 20*k)
				}
				for step, lr := range want {
					for j := range k {
						if got := rec.lrs[step*k+j]; got != lr {
							t.Errorf("step %d batch %d: lr %v, want %v", step, step*k+j, got, lr)
						}
					}
				}
			})
		}
	}
}

func TestSchedulerEpochIntervalAndPlateau(t *testing.T) {
	exp := optim.NewExponentialLR(0.5)
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

	plateau := optim.NewReduceLROnPlateau(optim.PlateauMin)
	plateau.Patience = -1 // patience 0
	m = &scheduled{setup: volt.OptimizerSetup{Optimizer: optim.SGD(0.1), Scheduler: plateau, Monitor: "no_such_metric"}}
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 2}))
	err := tr.Fit(t.Context(), m, boringData())
	if err == nil || !strings.Contains(err.Error(), `monitors "no_such_metric", which was not logged; logged metrics: train_loss, val_loss`) {
		t.Fatalf("Fit error = %v", err)
	}
}

// constantScore logs the same "score" after every validation.
type constantScore struct{ scheduled }

func (m *constantScore) OnValidationEpochEnd(t *volt.Trainer) error {
	t.Log("score", 1)
	return nil
}

func TestPlateauReducesAfterPatience(t *testing.T) {
	plateau := optim.NewReduceLROnPlateau(optim.PlateauMin)
	plateau.Patience, plateau.Factor = 1, 0.5
	rec := &lrRecorder{}
	m := &constantScore{scheduled{setup: volt.OptimizerSetup{Optimizer: optim.SGD(0.1), Scheduler: plateau, Monitor: "score"}}}
	fitBoring(t, volt.Config{MaxEpochs: 6, Callbacks: []volt.Callback{rec}, NumSanityValSteps: volt.Ptr(0)}, boringData(), m)
	// The score never improves after epoch 0: with patience 1 the LR halves
	// after epochs 2 and 4 (each reduction restarts the count).
	want := []float64{0.1, 0.1, 0.1, 0.05, 0.05, 0.025}
	for epoch, lr := range want {
		if got := rec.lrs[4*epoch]; math.Abs(got-lr) > 1e-6*lr {
			t.Errorf("epoch %d: lr %v, want %v", epoch, got, lr)
		}
	}
}

// traceCounter counts how often its training step is traced.
type traceCounter struct {
	scheduled
	traces int
}

func (m *traceCounter) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	m.traces++
	return m.scheduled.TrainingStep(s, b)
}

func TestChangingTheLearningRateNeverRetraces(t *testing.T) {
	sched := optim.NewExponentialLR(0.5)
	m := &traceCounter{scheduled: scheduled{setup: volt.OptimizerSetup{Optimizer: optim.SGD(0.1), Scheduler: sched, Interval: volt.IntervalStep}}}
	rec := &lrRecorder{}
	fitBoring(t, volt.Config{MaxEpochs: 3, Callbacks: []volt.Callback{rec}}, loaderOf(regression(16, 1), 4), m)
	if m.traces != 1 {
		t.Errorf("the training step was traced %d times over 12 learning rates, want 1", m.traces)
	}
	if rec.lrs[0] == rec.lrs[11] {
		t.Error("the learning rate did not change")
	}
}

// TestSchedulerLiteralsValidateAtFit: a scheduler written as a struct literal
// or made by its constructor in ConfigureOptimizers (which returns no error)
// takes PyTorch's defaults from its zero fields, and an invalid one is
// reported by Fit, naming the field, before any step (no panic from Start).
func TestSchedulerLiteralsValidateAtFit(t *testing.T) {
	tests := []struct {
		name  string
		setup volt.OptimizerSetup
		want  string // substring of Fit's error; "" for success
	}{
		{"plateau literal", volt.OptimizerSetup{Optimizer: optim.SGD(0.1),
			Scheduler: &optim.ReduceLROnPlateau{Patience: 1, Factor: 0.5}, Monitor: "val_loss"}, ""},
		{"one cycle literal", volt.OptimizerSetup{Optimizer: optim.SGD(0.1),
			Scheduler: &optim.OneCycleLR{MaxLR: 0.1, TotalSteps: 8}, Interval: volt.IntervalStep}, ""},
		{"step size missing", volt.OptimizerSetup{Optimizer: optim.SGD(0.1), Scheduler: &optim.StepLR{}},
			"optimizer 0: Scheduler: optim.StepLR.StepSize: must be >= 1"},
		{"bad factor", volt.OptimizerSetup{Optimizer: optim.SGD(0.1),
			Scheduler: &optim.ReduceLROnPlateau{Factor: 2}, Monitor: "val_loss"}, "optim.ReduceLROnPlateau.Factor"},
		{"constructed ok", volt.OptimizerSetup{Optimizer: optim.SGD(0.1), Scheduler: optim.NewExponentialLR(0.9)}, ""},
		{"NewExponentialLR gamma 0", volt.OptimizerSetup{Optimizer: optim.SGD(0.1), Scheduler: optim.NewExponentialLR(0)},
			"ConfigureOptimizers: optimizer 0: Scheduler: optim.ExponentialLR.Gamma: must be a finite number > 0 (required), got 0"},
		{"NewStepLR step size 0", volt.OptimizerSetup{Optimizer: optim.SGD(0.1), Scheduler: optim.NewStepLR(0, 0.5)},
			"Scheduler: optim.StepLR.StepSize: must be >= 1, got 0"},
		{"NewMultiStepLR milestone -1", volt.OptimizerSetup{Optimizer: optim.SGD(0.1), Scheduler: optim.NewMultiStepLR([]int{2, -1}, 0.5)},
			"Scheduler: optim.MultiStepLR.Milestones[1]"},
		{"NewCosineAnnealingLR TMax 0", volt.OptimizerSetup{Optimizer: optim.SGD(0.1), Scheduler: optim.NewCosineAnnealingLR(0, 0)},
			"Scheduler: optim.CosineAnnealingLR.TMax"},
		{"NewCosineAnnealingWarmRestarts T0 0", volt.OptimizerSetup{Optimizer: optim.SGD(0.1),
			Scheduler: optim.NewCosineAnnealingWarmRestarts(0, 1, 0)}, "Scheduler: optim.CosineAnnealingWarmRestarts.T0"},
		{"NewLinearWarmup start 2", volt.OptimizerSetup{Optimizer: optim.SGD(0.1), Scheduler: optim.NewLinearWarmup(2, 1, 5)},
			"Scheduler: optim.LinearWarmup.StartFactor"},
		{"NewLambdaLR nil", volt.OptimizerSetup{Optimizer: optim.SGD(0.1), Scheduler: optim.NewLambdaLR(nil)},
			"Scheduler: optim.LambdaLR.Fn"},
		{"NewOneCycleLR max lr -1", volt.OptimizerSetup{Optimizer: optim.SGD(0.1), Scheduler: optim.NewOneCycleLR(-1, 8),
			Interval: volt.IntervalStep}, "Scheduler: optim.OneCycleLR.MaxLR"},
		{"NewReduceLROnPlateau mode", volt.OptimizerSetup{Optimizer: optim.SGD(0.1), Scheduler: optim.NewReduceLROnPlateau("up"),
			Monitor: "val_loss"}, `Scheduler: optim.ReduceLROnPlateau.Mode: must be "min" (default, "") or "max", got "up"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &scheduled{setup: tc.setup}
			tr, err := volt.NewTrainer(quiet(volt.Config{MaxEpochs: 2}))
			if err != nil {
				t.Fatal(err)
			}
			err = tr.Fit(t.Context(), m, boringData())
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Fit: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Fit error = %v, want one containing %q", err, tc.want)
			case tc.want != "" && tr.GlobalStep() != 0:
				t.Errorf("Fit took %d steps before reporting %v", tr.GlobalStep(), err)
			}
		})
	}
}

// TestOneCyclePastTotalStepsFailsFit: a OneCycleLR stepped more than its
// TotalSteps fails Fit at that step, as Lightning's run raises torch's
// "Tried to step 7 times. The specified number of total steps is 5": the
// error names the optimizer, the scheduler, the step and TotalSteps, and
// the run ends after the batch whose scheduler step it was.
func TestOneCyclePastTotalStepsFailsFit(t *testing.T) {
	m := &scheduled{setup: volt.OptimizerSetup{Optimizer: optim.SGD(0.1),
		Scheduler: &optim.OneCycleLR{MaxLR: 0.1, TotalSteps: 5}, Interval: volt.IntervalStep}}
	tr, err := volt.NewTrainer(quiet(volt.Config{MaxEpochs: 2}))
	if err != nil {
		t.Fatal(err)
	}
	err = tr.Fit(t.Context(), m, loaderOf(regression(16, 1), 4))
	const want = "optimizer 0's scheduler: optim.OneCycleLR: step 6 is past TotalSteps 5"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Fit error = %v, want one containing %q", err, want)
	}
	if tr.GlobalStep() != 6 || tr.CurrentEpoch() != 1 {
		t.Errorf("failed at epoch %d, global step %d; Lightning fails at epoch 1, global step 6", tr.CurrentEpoch(), tr.GlobalStep())
	}
}
