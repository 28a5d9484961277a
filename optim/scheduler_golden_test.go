package optim

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

// schedulerGolden is testdata/schedulers_golden.json.
type schedulerGolden struct {
	Cases []struct {
		Name    string          `json:"name"`
		BaseLR  float64         `json:"base_lr"`
		Params  json.RawMessage `json:"params"`
		Metrics []float64       `json:"metrics"` // ReduceLROnPlateau only
		LRs     []float64       `json:"lrs"`     // after construction, then after each step
	} `json:"cases"`
}

// goldenSchedulers builds, for each golden case, the Go scheduler configured
// like the PyTorch one. The JSON params are PyTorch's arguments.
var goldenSchedulers = map[string]func(t *testing.T, params json.RawMessage) Scheduler{
	"step_lr": func(t *testing.T, raw json.RawMessage) Scheduler {
		var p struct {
			StepSize int     `json:"step_size"`
			Gamma    float64 `json:"gamma"`
		}
		decode(t, raw, &p)
		return built(NewStepLR(p.StepSize, p.Gamma))(t)
	},
	"multistep_lr": func(t *testing.T, raw json.RawMessage) Scheduler {
		var p struct {
			Milestones []int   `json:"milestones"`
			Gamma      float64 `json:"gamma"`
		}
		decode(t, raw, &p)
		return built(NewMultiStepLR(p.Milestones, p.Gamma))(t)
	},
	"exponential_lr": func(t *testing.T, raw json.RawMessage) Scheduler {
		var p struct {
			Gamma float64 `json:"gamma"`
		}
		decode(t, raw, &p)
		return built(NewExponentialLR(p.Gamma))(t)
	},
	"cosine_annealing_lr":         cosineFromGolden,
	"cosine_annealing_lr_tmax10":  cosineFromGolden,
	"cosine_warm_restarts":        warmRestartsFromGolden,
	"cosine_warm_restarts_tmult1": warmRestartsFromGolden,
	"linear_warmup":               linearFromGolden,
	"linear_decay":                linearFromGolden,
	"linear_decay_to_zero":        linearFromGolden,
	"one_cycle_cos":               oneCycleFromGolden,
	"one_cycle_linear":            oneCycleFromGolden,
	"one_cycle_three_phase":       oneCycleFromGolden,
	"lambda_pow": func(t *testing.T, _ json.RawMessage) Scheduler {
		return built(NewLambdaLR(func(step int) float64 { return math.Pow(0.95, float64(step)) }))(t)
	},
	"lambda_inverse": func(t *testing.T, _ json.RawMessage) Scheduler {
		return built(NewLambdaLR(func(step int) float64 { return 1 / float64(step+1) }))(t)
	},
	"plateau_min_rel":        plateauFromGolden,
	"plateau_max_abs_min_lr": plateauFromGolden,
	"plateau_defaults":       plateauFromGolden,

	"plateau_zero_patience_threshold_eps": plateauFromGolden,
}

// cosineFromGolden builds CosineAnnealingLR from PyTorch's arguments.
func cosineFromGolden(t *testing.T, raw json.RawMessage) Scheduler {
	var p struct {
		TMax   int     `json:"t_max"`
		EtaMin float64 `json:"eta_min"`
	}
	decode(t, raw, &p)
	return built(NewCosineAnnealingLR(p.TMax, p.EtaMin))(t)
}

// warmRestartsFromGolden builds CosineAnnealingWarmRestarts from PyTorch's arguments.
func warmRestartsFromGolden(t *testing.T, raw json.RawMessage) Scheduler {
	var p struct {
		T0     int     `json:"t0"`
		TMult  int     `json:"t_mult"`
		EtaMin float64 `json:"eta_min"`
	}
	decode(t, raw, &p)
	return built(NewCosineAnnealingWarmRestarts(p.T0, p.TMult, p.EtaMin))(t)
}

// linearFromGolden builds LinearWarmup from LinearLR's arguments.
func linearFromGolden(t *testing.T, raw json.RawMessage) Scheduler {
	var p struct {
		StartFactor float64 `json:"start_factor"`
		EndFactor   float64 `json:"end_factor"`
		TotalIters  int     `json:"total_iters"`
	}
	decode(t, raw, &p)
	return built(NewLinearWarmup(p.StartFactor, literalZero(p.EndFactor), p.TotalIters))(t)
}

// oneCycleFromGolden builds OneCycleLR from PyTorch's arguments.
func oneCycleFromGolden(t *testing.T, raw json.RawMessage) Scheduler {
	var p struct {
		MaxLR          float64 `json:"max_lr"`
		TotalSteps     int     `json:"total_steps"`
		PctStart       float64 `json:"pct_start"`
		Anneal         string  `json:"anneal"`
		DivFactor      float64 `json:"div_factor"`
		FinalDivFactor float64 `json:"final_div_factor"`
		ThreePhase     bool    `json:"three_phase"`
	}
	decode(t, raw, &p)
	s := built(NewOneCycleLR(p.MaxLR, p.TotalSteps))(t)
	s.PctStart, s.Anneal, s.DivFactor, s.FinalDivFactor, s.ThreePhase =
		p.PctStart, AnnealStrategy(p.Anneal), p.DivFactor, p.FinalDivFactor, p.ThreePhase
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

// plateauFromGolden builds ReduceLROnPlateau from PyTorch's arguments and checks NewReduceLROnPlateau's defaults against the golden case that uses PyTorch's.
func plateauFromGolden(t *testing.T, raw json.RawMessage) Scheduler {
	var p struct {
		Mode          string  `json:"mode"`
		Factor        float64 `json:"factor"`
		Patience      int     `json:"patience"`
		Threshold     float64 `json:"threshold"`
		ThresholdMode string  `json:"threshold_mode"`
		Cooldown      int     `json:"cooldown"`
		MinLR         float64 `json:"min_lr"`
		Eps           float64 `json:"eps"`
	}
	decode(t, raw, &p)
	s := built(NewReduceLROnPlateau(PlateauMode(p.Mode)))(t)
	defaults := *s
	s.Factor, s.Patience, s.Threshold, s.ThresholdMode, s.Cooldown, s.MinLR, s.Eps =
		p.Factor, literalZero(p.Patience), literalZero(p.Threshold), ThresholdMode(p.ThresholdMode), p.Cooldown, p.MinLR, literalZero(p.Eps)
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if p.Factor == 0.1 && p.Patience == 10 && p.Cooldown == 0 && *s != defaults {
		t.Fatalf("NewReduceLROnPlateau defaults %+v differ from PyTorch's %+v", defaults, *s)
	}
	return s
}

// literalZero spells PyTorch's argument v as volt's field: a literal 0 is
// -1 where volt's zero value means PyTorch's non-zero default.
func literalZero[T int | float64](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

// decode unmarshals golden params.
func decode(t *testing.T, raw json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decoding params %s: %v", raw, err)
	}
}

// built returns a function that fails t when the constructed s does not
// validate and returns s otherwise.
func built[S interface{ Validate() error }](s S) func(t *testing.T) S {
	return func(t *testing.T) S {
		t.Helper()
		if err := s.Validate(); err != nil {
			t.Fatalf("constructor: %v", err)
		}
		return s
	}
}

// metricAt returns the metric the golden case fed at step i (1-based), NaN
// for schedulers without one.
func metricAt(metrics []float64, i int) float64 {
	if metrics == nil {
		return math.NaN()
	}
	return metrics[i-1]
}

// TestSchedulersMatchPyTorch compares every scheduler's LR sequence (after
// Start, then after each Step) with PyTorch's.
func TestSchedulersMatchPyTorch(t *testing.T) {
	var golden schedulerGolden
	loadGolden(t, "schedulers_golden.json", &golden)
	if len(golden.Cases) != len(goldenSchedulers) {
		t.Errorf("golden file has %d cases, the test knows %d", len(golden.Cases), len(goldenSchedulers))
	}
	for _, tc := range golden.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			build, ok := goldenSchedulers[tc.Name]
			if !ok {
				t.Fatalf("no Go scheduler for golden case %q", tc.Name)
			}
			s := build(t, tc.Params)
			got := []float64{s.Start(tc.BaseLR)}
			for i := 1; i < len(tc.LRs); i++ {
				lr := s.Step(metricAt(tc.Metrics, i))
				if lr != s.LR() {
					t.Fatalf("step %d: Step returned %v but LR() is %v", i, lr, s.LR())
				}
				got = append(got, lr)
			}
			checkClose(t, "lr", got, tc.LRs, 1e-9)
		})
	}
}

// TestSchedulerStateRoundTrip saves every scheduler's state mid-sequence,
// loads it into a fresh scheduler and checks that both continue bitwise
// identically (and still match PyTorch).
func TestSchedulerStateRoundTrip(t *testing.T) {
	var golden schedulerGolden
	loadGolden(t, "schedulers_golden.json", &golden)
	for _, tc := range golden.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			build := goldenSchedulers[tc.Name]
			orig := build(t, tc.Params)
			orig.Start(tc.BaseLR)
			mid := len(tc.LRs) / 2
			for i := 1; i <= mid; i++ {
				orig.Step(metricAt(tc.Metrics, i))
			}
			state, err := orig.State()
			if err != nil {
				t.Fatalf("State: %v", err)
			}
			restored := build(t, tc.Params)
			if err := restored.LoadState(state); err != nil {
				t.Fatalf("LoadState: %v", err)
			}
			if restored.LR() != orig.LR() {
				t.Fatalf("restored LR %v, want %v", restored.LR(), orig.LR())
			}
			again, err := restored.State()
			if err != nil {
				t.Fatalf("State after LoadState: %v", err)
			}
			if string(again) != string(state) {
				t.Errorf("state changed by a round trip:\n got %s\nwant %s", again, state)
			}
			for i := mid + 1; i < len(tc.LRs); i++ {
				a, b := orig.Step(metricAt(tc.Metrics, i)), restored.Step(metricAt(tc.Metrics, i))
				if math.Float64bits(a) != math.Float64bits(b) {
					t.Fatalf("step %d: restored LR %v, original %v", i, b, a)
				}
				if !relClose(b, tc.LRs[i], 1e-9) {
					t.Errorf("step %d: restored LR %v, PyTorch %v", i, b, tc.LRs[i])
				}
			}
		})
	}
}

// TestMetricScheduler checks which schedulers ask for a metric.
func TestMetricScheduler(t *testing.T) {
	plateau := NewReduceLROnPlateau(PlateauMin)
	step := NewStepLR(1, 0.5)
	tests := []struct {
		name string
		s    Scheduler
		want bool
	}{
		{"ReduceLROnPlateau", plateau, true},
		{"StepLR", step, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, ok := tc.s.(MetricScheduler)
			if got := ok && m.NeedsMetric(); got != tc.want {
				t.Errorf("needs metric = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestOneCycleRefusesStepsPastTotalSteps: as PyTorch raises ("Tried to
// step 12 times. The specified number of total steps is 10"), the step
// after TotalSteps is refused: CheckStep says so beforehand, naming the
// scheduler, the step and TotalSteps, and Step panics with that error; the
// steps up to TotalSteps are allowed.
func TestOneCycleRefusesStepsPastTotalSteps(t *testing.T) {
	s := NewOneCycleLR(1, 10)
	s.Start(0)
	for i := range 10 {
		if err := s.CheckStep(); err != nil {
			t.Fatalf("step %d of 10: CheckStep: %v", i+1, err)
		}
		s.Step(math.NaN())
	}
	last := s.LR()
	const want = "optim.OneCycleLR: step 11 is past TotalSteps 10"
	err := s.CheckStep()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("CheckStep after 10 steps = %v, want an error containing %q", err, want)
	}
	func() {
		defer func() {
			r := recover()
			if e, ok := r.(error); !ok || !strings.Contains(e.Error(), want) {
				t.Errorf("Step past TotalSteps panicked with %v, want an error containing %q", r, want)
			}
		}()
		s.Step(math.NaN())
	}()
	if s.LR() != last {
		t.Errorf("a refused step changed the LR: %v, want %v", s.LR(), last)
	}
	var _ BoundedScheduler = s
}

// TestSchedulerStepBeforeStart checks that Step without Start panics with a
// message saying so.
func TestSchedulerStepBeforeStart(t *testing.T) {
	s := NewExponentialLR(0.5)
	defer func() {
		if r := recover(); r == nil || fmt.Sprint(r) != "optim.ExponentialLR.Step: called before Start; call Start(baseLR) first" {
			t.Errorf("panic = %v", r)
		}
	}()
	s.Step(math.NaN())
}
