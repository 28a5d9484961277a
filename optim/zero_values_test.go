package optim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestZeroValuesAreTheDocumentedDefaults: a struct literal that sets only
// the required fields validates and schedules exactly as the same scheduler
// with PyTorch's documented defaults written out (the constructors' values),
// over a seeded sequence of metrics.
func TestZeroValuesAreTheDocumentedDefaults(t *testing.T) {
	tests := []struct {
		name           string
		zero, explicit Scheduler
	}{
		{"ReduceLROnPlateau", &ReduceLROnPlateau{},
			&ReduceLROnPlateau{Mode: PlateauMin, Factor: 0.1, Patience: 10, Threshold: 1e-4, ThresholdMode: ThresholdRel, Eps: 1e-8}},
		{"ReduceLROnPlateau as in the issue", &ReduceLROnPlateau{Patience: 1, Factor: 0.5},
			&ReduceLROnPlateau{Mode: PlateauMin, Factor: 0.5, Patience: 1, Threshold: 1e-4, ThresholdMode: ThresholdRel, Eps: 1e-8}},
		{"OneCycleLR", &OneCycleLR{MaxLR: 1, TotalSteps: 60},
			&OneCycleLR{MaxLR: 1, TotalSteps: 60, PctStart: 0.3, Anneal: AnnealCos, DivFactor: 25, FinalDivFactor: 1e4}},
		{"LinearWarmup", &LinearWarmup{}, &LinearWarmup{StartFactor: 1.0 / 3, EndFactor: 1, TotalIters: 5}},
		{"StepLR", &StepLR{StepSize: 3}, &StepLR{StepSize: 3, Gamma: 0.1}},
		{"MultiStepLR", &MultiStepLR{Milestones: []int{2, 5}}, &MultiStepLR{Milestones: []int{2, 5}, Gamma: 0.1}},
		{"CosineAnnealingLR", &CosineAnnealingLR{TMax: 7}, &CosineAnnealingLR{TMax: 7, EtaMin: 0}},
		{"CosineAnnealingWarmRestarts", &CosineAnnealingWarmRestarts{T0: 3},
			&CosineAnnealingWarmRestarts{T0: 3, TMult: 1, EtaMin: 0}},
	}
	rng := rand.New(rand.NewPCG(24, 6))
	metrics := make([]float64, 60)
	for i := range metrics {
		metrics[i] = 1 + rng.Float64() - float64(i)/200 // noisy, slowly improving: some plateaus
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, s := range []Scheduler{tc.zero, tc.explicit} {
				if err := s.(interface{ Validate() error }).Validate(); err != nil {
					t.Fatalf("Validate: %v", err)
				}
			}
			a, b := tc.zero.Start(0.1), tc.explicit.Start(0.1)
			changes := 0
			for i := 0; ; i++ {
				if math.Float64bits(a) != math.Float64bits(b) {
					t.Fatalf("step %d: zero-valued LR %v, documented defaults %v", i, a, b)
				}
				if i == len(metrics) {
					break
				}
				prev := a
				a, b = tc.zero.Step(metrics[i]), tc.explicit.Step(metrics[i])
				if a != prev {
					changes++
				}
			}
			if changes == 0 {
				t.Errorf("the LR never changed in %d steps: the comparison shows nothing", len(metrics))
			}
		})
	}
}

// TestLossScalerZeroValue: LossScaler{} validates and scales as
// NewLossScaler's GradScaler defaults.
func TestLossScalerZeroValue(t *testing.T) {
	zero, explicit := &LossScaler{}, NewLossScaler()
	if err := zero.Validate(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(24, 7))
	for i := range 5000 {
		inf := rng.IntN(1000) == 0
		zero.Update(inf)
		explicit.Update(inf)
		if zero.Scale() != explicit.Scale() || zero.GrowthTracker() != explicit.GrowthTracker() {
			t.Fatalf("update %d: zero value scale %v tracker %d, defaults %v and %d",
				i, zero.Scale(), zero.GrowthTracker(), explicit.Scale(), explicit.GrowthTracker())
		}
	}
}

// TestNegativeMeansZero: where the zero value means a non-zero default, a
// negative value means a literal 0 (PyTorch's patience=0: reduce at the
// first step without improvement).
func TestNegativeMeansZero(t *testing.T) {
	s := &ReduceLROnPlateau{Patience: -1, Factor: 0.5}
	s.Start(1)
	if lr := s.Step(1); lr != 1 {
		t.Fatalf("first step (an improvement) changed the LR to %v", lr)
	}
	if lr := s.Step(2); lr != 0.5 {
		t.Errorf("Patience -1: LR %v after the first bad step, want 0.5 (patience 0)", lr)
	}
	w := &LinearWarmup{StartFactor: 1, EndFactor: -1, TotalIters: 2}
	w.Start(1)
	w.Step(math.NaN())
	if lr := w.Step(math.NaN()); lr != 0 {
		t.Errorf("EndFactor -1: LR %v after TotalIters, want 0", lr)
	}
}
