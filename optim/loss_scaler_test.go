package optim

import (
	"strings"
	"testing"
)

// lossScalerGolden is testdata/loss_scaler_golden.json.
type lossScalerGolden struct {
	Cases []struct {
		Name   string `json:"name"`
		Config struct {
			InitScale      float64 `json:"init_scale"`
			GrowthFactor   float64 `json:"growth_factor"`
			BackoffFactor  float64 `json:"backoff_factor"`
			GrowthInterval int     `json:"growth_interval"`
		} `json:"config"`
		FoundInf       []bool    `json:"found_inf"`
		Scales         []float64 `json:"scales"`          // after each update
		GrowthTrackers []int     `json:"growth_trackers"` // after each update
	} `json:"cases"`
}

// newGoldenScaler returns the LossScaler of a golden case.
func newGoldenScaler(t *testing.T, golden lossScalerGolden, i int) *LossScaler {
	t.Helper()
	c := golden.Cases[i].Config
	s := NewLossScaler()
	s.InitScale, s.GrowthFactor, s.BackoffFactor, s.GrowthInterval = c.InitScale, c.GrowthFactor, c.BackoffFactor, c.GrowthInterval
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLossScalerMatchesGradScaler replays fixed found-inf patterns and
// compares the scale and growth tracker after each update with
// GradScaler.update's rule (float32 scale, no growth past float32's range).
func TestLossScalerMatchesGradScaler(t *testing.T) {
	var golden lossScalerGolden
	loadGolden(t, "loss_scaler_golden.json", &golden)
	for i, tc := range golden.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			s := newGoldenScaler(t, golden, i)
			if got := s.Scale(); got != float64(float32(tc.Config.InitScale)) {
				t.Fatalf("initial scale = %v, want %v", got, tc.Config.InitScale)
			}
			for k, inf := range tc.FoundInf {
				s.Update(inf)
				if s.Scale() != tc.Scales[k] || s.GrowthTracker() != tc.GrowthTrackers[k] {
					t.Fatalf("update %d (found inf %v): scale %v tracker %d, want %v and %d",
						k, inf, s.Scale(), s.GrowthTracker(), tc.Scales[k], tc.GrowthTrackers[k])
				}
			}
		})
	}
}

// TestLossScalerStateRoundTrip saves the state mid-pattern and checks that the
// restored scaler continues identically.
func TestLossScalerStateRoundTrip(t *testing.T) {
	var golden lossScalerGolden
	loadGolden(t, "loss_scaler_golden.json", &golden)
	for i, tc := range golden.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			s := newGoldenScaler(t, golden, i)
			mid := len(tc.FoundInf) / 2
			for _, inf := range tc.FoundInf[:mid] {
				s.Update(inf)
			}
			state, err := s.State()
			if err != nil {
				t.Fatal(err)
			}
			restored := NewLossScaler()
			if err := restored.LoadState(state); err != nil {
				t.Fatalf("LoadState: %v", err)
			}
			if *restored != *s {
				t.Fatalf("restored %+v, want %+v", *restored, *s)
			}
			for k := mid; k < len(tc.FoundInf); k++ {
				restored.Update(tc.FoundInf[k])
				if restored.Scale() != tc.Scales[k] || restored.GrowthTracker() != tc.GrowthTrackers[k] {
					t.Fatalf("update %d: scale %v tracker %d, want %v and %d",
						k, restored.Scale(), restored.GrowthTracker(), tc.Scales[k], tc.GrowthTrackers[k])
				}
			}
		})
	}
}

// TestLossScalerDefaults checks GradScaler's defaults.
func TestLossScalerDefaults(t *testing.T) {
	s := NewLossScaler()
	want := LossScaler{InitScale: 65536, GrowthFactor: 2, BackoffFactor: 0.5, GrowthInterval: 2000}
	if *s != want {
		t.Errorf("NewLossScaler() = %+v, want %+v", *s, want)
	}
	if s.Scale() != 65536 || s.GrowthTracker() != 0 {
		t.Errorf("initial scale %v tracker %d, want 65536 and 0", s.Scale(), s.GrowthTracker())
	}
}

// TestLossScalerValidate checks that each invalid field is reported by name.
func TestLossScalerValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*LossScaler)
		want   string // substring of the error; "" for valid
	}{
		{"defaults", func(*LossScaler) {}, ""},
		{"zero init scale is the default", func(s *LossScaler) { s.InitScale = 0 }, ""},
		{"negative init scale", func(s *LossScaler) { s.InitScale = -1 }, "InitScale"},
		{"init scale past float32", func(s *LossScaler) { s.InitScale = 1e39 }, "InitScale"},
		{"growth factor 1", func(s *LossScaler) { s.GrowthFactor = 1 }, "GrowthFactor"},
		{"backoff factor 1", func(s *LossScaler) { s.BackoffFactor = 1 }, "BackoffFactor"},
		{"backoff factor -0.5", func(s *LossScaler) { s.BackoffFactor = -0.5 }, "BackoffFactor"},
		{"growth interval -1", func(s *LossScaler) { s.GrowthInterval = -1 }, "GrowthInterval"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewLossScaler()
			tc.modify(s)
			checkValidateError(t, s.Validate(), tc.want)
		})
	}
}

// TestLossScalerLoadStateRejects checks that invalid states are refused and
// leave the scaler unchanged.
func TestLossScalerLoadStateRejects(t *testing.T) {
	tests := []struct {
		name  string
		state string
		want  string
	}{
		{"not json", "{", "LoadState"},
		{"bad config", `{"init_scale":65536,"growth_factor":0.5,"backoff_factor":0.5,"growth_interval":3}`, "GrowthFactor"},
		{"tracker out of range", `{"init_scale":65536,"growth_factor":2,"backoff_factor":0.5,"growth_interval":3,"started":true,"scale":4,"growth_tracker":3}`, "growth_tracker"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewLossScaler()
			s.Update(false)
			before := *s
			err := s.LoadState([]byte(tc.state))
			checkValidateError(t, err, tc.want)
			if *s != before {
				t.Errorf("failed LoadState changed the scaler: %+v, was %+v", *s, before)
			}
		})
	}
}

// checkValidateError checks err against want: nil when want is "", else an
// error containing want.
func checkValidateError(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Errorf("no error, want one mentioning %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("error %q does not mention %q", err, want)
	}
}
