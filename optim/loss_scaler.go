package optim

import (
	"encoding/json"
	"fmt"
	"math"
)

// LossScaler is a dynamic loss scale for mixed-precision training, with the
// semantics of torch.cuda.amp.GradScaler: the loss is multiplied by Scale
// before the backward pass; after each step Update halves (BackoffFactor)
// the scale when the gradients overflowed, and doubles it (GrowthFactor)
// after GrowthInterval consecutive steps without overflow. Like PyTorch's, the
// scale is kept in float32 and never grows to +Inf. State lives on the host.
// Zero fields take GradScaler's defaults, so &optim.LossScaler{} is
// GradScaler().
type LossScaler struct {
	InitScale      float64 // initial scale, finite and > 0; 0 means 65536
	GrowthFactor   float64 // growth multiplier, finite and > 1; 0 means 2
	BackoffFactor  float64 // backoff multiplier, in (0, 1); 0 means 0.5
	GrowthInterval int     // overflow-free steps between growths, >= 1; 0 means 2000

	started       bool
	scale         float64
	growthTracker int
}

// lossScalerState is the JSON layout of LossScaler.State.
type lossScalerState struct {
	InitScale      float64 `json:"init_scale"`
	GrowthFactor   float64 `json:"growth_factor"`
	BackoffFactor  float64 `json:"backoff_factor"`
	GrowthInterval int     `json:"growth_interval"`
	Started        bool    `json:"started"`
	Scale          float64 `json:"scale"`
	GrowthTracker  int     `json:"growth_tracker"`
}

// NewLossScaler returns a LossScaler with GradScaler's defaults: InitScale
// 65536, GrowthFactor 2, BackoffFactor 0.5, GrowthInterval 2000.
func NewLossScaler() *LossScaler {
	return &LossScaler{InitScale: 65536, GrowthFactor: 2, BackoffFactor: 0.5, GrowthInterval: 2000}
}

// Validate reports the first invalid field, naming it and its valid range.
func (s *LossScaler) Validate() error {
	c := s.withDefaults()
	if !finite(c.InitScale) || c.InitScale <= 0 || math.IsInf(float64(float32(c.InitScale)), 0) {
		return fmt.Errorf("optim.LossScaler.InitScale: must be a finite float32 number > 0 (0 means 65536), got %v", s.InitScale)
	}
	if !finite(c.GrowthFactor) || c.GrowthFactor <= 1 {
		return fmt.Errorf("optim.LossScaler.GrowthFactor: must be a finite number > 1 (0 means 2), got %v", s.GrowthFactor)
	}
	if !(c.BackoffFactor > 0 && c.BackoffFactor < 1) {
		return fmt.Errorf("optim.LossScaler.BackoffFactor: must be in (0, 1) (0 means 0.5), got %v", s.BackoffFactor)
	}
	if c.GrowthInterval < 1 {
		return fmt.Errorf("optim.LossScaler.GrowthInterval: must be >= 1 (0 means 2000), got %d", s.GrowthInterval)
	}
	return nil
}

// withDefaults returns the configuration the scale follows, zero fields
// replaced by GradScaler's defaults.
func (s *LossScaler) withDefaults() LossScaler {
	return LossScaler{
		InitScale: orDefault(s.InitScale, 65536), GrowthFactor: orDefault(s.GrowthFactor, 2),
		BackoffFactor: orDefault(s.BackoffFactor, 0.5), GrowthInterval: orDefault(s.GrowthInterval, 2000),
	}
}

// init sets the scale to InitScale (rounded to float32, as GradScaler's
// float32 tensor holds it) on first use; it panics if the configuration is
// invalid.
func (s *LossScaler) init() {
	if s.started {
		return
	}
	mustBeValid(s.Validate())
	s.scale = float64(float32(s.withDefaults().InitScale))
	s.growthTracker = 0
	s.started = true
}

// Scale returns the current loss scale.
func (s *LossScaler) Scale() float64 {
	s.init()
	return s.scale
}

// GrowthTracker returns the number of consecutive overflow-free updates since
// the last growth or backoff.
func (s *LossScaler) GrowthTracker() int {
	s.init()
	return s.growthTracker
}

// Update updates the scale after a step, exactly like GradScaler.update
// (torch._amp_update_scale_): foundInf backs the scale off and resets the
// tracker; otherwise the tracker counts up, and reaching GrowthInterval grows
// the scale (unless that overflows float32) and resets it. Products are
// rounded to float32, as PyTorch stores the scale.
func (s *LossScaler) Update(foundInf bool) {
	s.init()
	c := s.withDefaults()
	if foundInf {
		s.scale = float64(float32(s.scale * c.BackoffFactor))
		s.growthTracker = 0
		return
	}
	successful := s.growthTracker + 1
	if successful == c.GrowthInterval {
		grown := float32(s.scale * c.GrowthFactor)
		if !math.IsInf(float64(grown), 0) && !math.IsNaN(float64(grown)) {
			s.scale = float64(grown)
		}
		s.growthTracker = 0
		return
	}
	s.growthTracker = successful
}

// State serializes the configuration, scale and growth tracker as JSON for
// checkpoints; LoadState restores them.
func (s *LossScaler) State() ([]byte, error) {
	return json.Marshal(lossScalerState{
		InitScale: s.InitScale, GrowthFactor: s.GrowthFactor, BackoffFactor: s.BackoffFactor,
		GrowthInterval: s.GrowthInterval, Started: s.started, Scale: s.scale, GrowthTracker: s.growthTracker,
	})
}

// LoadState restores a state written by State. On error s is unchanged.
func (s *LossScaler) LoadState(data []byte) error {
	var st lossScalerState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("optim.LossScaler.LoadState: %w", err)
	}
	loaded := LossScaler{
		InitScale: st.InitScale, GrowthFactor: st.GrowthFactor, BackoffFactor: st.BackoffFactor,
		GrowthInterval: st.GrowthInterval, started: st.Started, scale: st.Scale, growthTracker: st.GrowthTracker,
	}
	if err := loaded.Validate(); err != nil {
		return fmt.Errorf("optim.LossScaler.LoadState: %w", err)
	}
	if st.Started && (!finite(st.Scale) || st.Scale < 0 || st.GrowthTracker < 0 || st.GrowthTracker >= loaded.withDefaults().GrowthInterval) {
		return fmt.Errorf("optim.LossScaler.LoadState: scale must be finite and >= 0 and growth_tracker in [0, growth_interval), got scale %v, growth_tracker %d",
			st.Scale, st.GrowthTracker)
	}
	*s = loaded
	return nil
}
