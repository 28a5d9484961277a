package optim

import (
	"math"
	"testing"
)

// TestSchedulerValidate checks that Validate reports each constructor's
// invalid argument by its field name, and accepts valid ones.
func TestSchedulerValidate(t *testing.T) {
	errOf := func(s interface{ Validate() error }) error { return s.Validate() }
	oneCycle := func(modify func(*OneCycleLR)) error {
		s := NewOneCycleLR(1, 100)
		modify(s)
		return s.Validate()
	}
	plateau := func(modify func(*ReduceLROnPlateau)) error {
		s := NewReduceLROnPlateau(PlateauMin)
		modify(s)
		return s.Validate()
	}
	tests := []struct {
		name string
		err  error
		want string // substring of the error; "" for valid
	}{
		{"StepLR ok", errOf(NewStepLR(3, 0.5)), ""},
		{"StepLR step size 0", errOf(NewStepLR(0, 0.5)), "StepLR.StepSize"},
		{"StepLR gamma -1", errOf(NewStepLR(3, -1)), "StepLR.Gamma"},
		{"StepLR gamma NaN", errOf(NewStepLR(3, math.NaN())), "StepLR.Gamma"},
		{"MultiStepLR ok", errOf(NewMultiStepLR([]int{3, 1}, 0.5)), ""},
		{"MultiStepLR none", errOf(NewMultiStepLR(nil, 0.5)), "MultiStepLR.Milestones"},
		{"MultiStepLR milestone 0", errOf(NewMultiStepLR([]int{2, 0}, 0.5)), "MultiStepLR.Milestones[1]"},
		{"MultiStepLR gamma inf", errOf(NewMultiStepLR([]int{2}, math.Inf(1))), "MultiStepLR.Gamma"},
		{"ExponentialLR gamma -1", errOf(NewExponentialLR(-1)), "ExponentialLR.Gamma"},
		{"CosineAnnealingLR ok", errOf(NewCosineAnnealingLR(10, 0)), ""},
		{"CosineAnnealingLR tmax 0", errOf(NewCosineAnnealingLR(0, 0)), "CosineAnnealingLR.TMax"},
		{"CosineAnnealingLR eta -1", errOf(NewCosineAnnealingLR(5, -1)), "CosineAnnealingLR.EtaMin"},
		{"WarmRestarts ok", errOf(NewCosineAnnealingWarmRestarts(5, 2, 0)), ""},
		{"WarmRestarts t0 0", errOf(NewCosineAnnealingWarmRestarts(0, 1, 0)), "CosineAnnealingWarmRestarts.T0"},
		{"WarmRestarts tmult -1", errOf(NewCosineAnnealingWarmRestarts(5, -1, 0)), "CosineAnnealingWarmRestarts.TMult"},
		{"WarmRestarts eta NaN", errOf(NewCosineAnnealingWarmRestarts(5, 1, math.NaN())), "CosineAnnealingWarmRestarts.EtaMin"},
		{"LinearWarmup ok", errOf(NewLinearWarmup(0.1, 1, 5)), ""},
		{"LinearWarmup start -0.5", errOf(NewLinearWarmup(-0.5, 1, 5)), "LinearWarmup.StartFactor"},
		{"LinearWarmup start 2", errOf(NewLinearWarmup(2, 1, 5)), "LinearWarmup.StartFactor"},
		{"LinearWarmup end 2", errOf(NewLinearWarmup(0.5, 2, 5)), "LinearWarmup.EndFactor"},
		{"LinearWarmup iters -1", errOf(NewLinearWarmup(0.5, 1, -1)), "LinearWarmup.TotalIters"},
		{"LambdaLR nil", errOf(NewLambdaLR(nil)), "LambdaLR.Fn"},
		{"OneCycleLR ok", oneCycle(func(*OneCycleLR) {}), ""},
		{"OneCycleLR max lr 0", oneCycle(func(s *OneCycleLR) { s.MaxLR = 0 }), "OneCycleLR.MaxLR"},
		{"OneCycleLR total 1", oneCycle(func(s *OneCycleLR) { s.TotalSteps = 1 }), "OneCycleLR.TotalSteps"},
		{"OneCycleLR pct 1", oneCycle(func(s *OneCycleLR) { s.PctStart = 1 }), "OneCycleLR.PctStart"},
		{"OneCycleLR pct too small", oneCycle(func(s *OneCycleLR) { s.PctStart = 0.005 }), "OneCycleLR.PctStart"},
		{"OneCycleLR three phase pct too big", oneCycle(func(s *OneCycleLR) { s.PctStart, s.ThreePhase = 0.6, true }), "OneCycleLR.PctStart"},
		{"OneCycleLR anneal", oneCycle(func(s *OneCycleLR) { s.Anneal = "exp" }), "OneCycleLR.Anneal"},
		{"OneCycleLR div -1", oneCycle(func(s *OneCycleLR) { s.DivFactor = -1 }), "OneCycleLR.DivFactor"},
		{"OneCycleLR final div NaN", oneCycle(func(s *OneCycleLR) { s.FinalDivFactor = math.NaN() }), "OneCycleLR.FinalDivFactor"},
		{"Plateau ok max", errOf(NewReduceLROnPlateau(PlateauMax)), ""},
		{"Plateau mode", errOf(NewReduceLROnPlateau("up")), "ReduceLROnPlateau.Mode"},
		{"Plateau factor 1", plateau(func(s *ReduceLROnPlateau) { s.Factor = 1 }), "ReduceLROnPlateau.Factor"},
		{"Plateau factor -0.5", plateau(func(s *ReduceLROnPlateau) { s.Factor = -0.5 }), "ReduceLROnPlateau.Factor"},
		{"Plateau patience -1 means 0", plateau(func(s *ReduceLROnPlateau) { s.Patience = -1 }), ""},
		{"Plateau threshold Inf", plateau(func(s *ReduceLROnPlateau) { s.Threshold = math.Inf(1) }), "ReduceLROnPlateau.Threshold"},
		{"Plateau threshold mode", plateau(func(s *ReduceLROnPlateau) { s.ThresholdMode = "pct" }), "ReduceLROnPlateau.ThresholdMode"},
		{"Plateau cooldown -1", plateau(func(s *ReduceLROnPlateau) { s.Cooldown = -1 }), "ReduceLROnPlateau.Cooldown"},
		{"Plateau min lr NaN", plateau(func(s *ReduceLROnPlateau) { s.MinLR = math.NaN() }), "ReduceLROnPlateau.MinLR"},
		{"Plateau eps NaN", plateau(func(s *ReduceLROnPlateau) { s.Eps = math.NaN() }), "ReduceLROnPlateau.Eps"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkValidateError(t, tc.err, tc.want) })
	}
}

// TestSchedulerLoadStateRejects checks that LoadState refuses foreign or
// invalid states and leaves the scheduler unchanged.
func TestSchedulerLoadStateRejects(t *testing.T) {
	stepState := func() []byte {
		s := NewStepLR(2, 0.5)
		s.Start(0.1)
		data, err := s.State()
		if err != nil {
			t.Fatal(err)
		}
		return data
	}()
	tests := []struct {
		name  string
		state string
		want  string
	}{
		{"not json", "[", "ExponentialLR.LoadState"},
		{"other kind", string(stepState), `kind: state is for "StepLR"`},
		{"bad config", `{"kind":"ExponentialLR","config":{"Gamma":0},"progress":{}}`, "ExponentialLR.Gamma"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewExponentialLR(0.5)
			s.Start(0.1)
			s.Step(math.NaN())
			before := *s
			checkValidateError(t, s.LoadState([]byte(tc.state)), tc.want)
			if *s != before {
				t.Errorf("failed LoadState changed the scheduler: %+v, was %+v", *s, before)
			}
		})
	}
}

// TestPlateauStateKeepsInfiniteBest checks that the initial best (±Inf, not
// representable in plain JSON) survives State/LoadState.
func TestPlateauStateKeepsInfiniteBest(t *testing.T) {
	for _, mode := range []PlateauMode{PlateauMin, PlateauMax} {
		t.Run(string(mode), func(t *testing.T) {
			s := NewReduceLROnPlateau(mode)
			s.Start(0.1)
			data, err := s.State()
			if err != nil {
				t.Fatalf("State: %v", err)
			}
			r := NewReduceLROnPlateau(PlateauMin)
			if err := r.LoadState(data); err != nil {
				t.Fatalf("LoadState: %v", err)
			}
			if *r != *s {
				t.Errorf("restored %+v, want %+v", *r, *s)
			}
		})
	}
}
