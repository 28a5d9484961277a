package optim

import (
	"fmt"
	"github.com/voltml/volt/internal/jsonfloat"
	"math"
)

// PlateauMode says whether ReduceLROnPlateau's metric improves by going down
// or up.
type PlateauMode string

// The modes of ReduceLROnPlateau.
const (
	PlateauMin PlateauMode = "min" // lower is better (a loss)
	PlateauMax PlateauMode = "max" // higher is better (an accuracy)
)

// ThresholdMode says how ReduceLROnPlateau measures a significant
// improvement.
type ThresholdMode string

// The threshold modes of ReduceLROnPlateau.
const (
	ThresholdRel ThresholdMode = "rel" // better than best*(1∓Threshold)
	ThresholdAbs ThresholdMode = "abs" // better than best∓Threshold
)

// ReduceLROnPlateau multiplies the learning rate by Factor when the
// monitored metric has not improved for more than Patience steps, like
// torch.optim.lr_scheduler.ReduceLROnPlateau. After a reduction it waits
// Cooldown steps before counting bad steps again. A NaN metric counts as no
// improvement, as in PyTorch.
//
// Every field's zero value is PyTorch's default, so a struct literal names
// only what differs: &optim.ReduceLROnPlateau{Patience: 1, Factor: 0.5}.
// Patience, Threshold and Eps default to non-zero values; a negative one
// means 0 (reduce at the first step without improvement, count any
// improvement, skip no reduction). Fit checks the fields (Validate).
type ReduceLROnPlateau struct {
	Mode          PlateauMode   // PlateauMin (default, "") or PlateauMax
	Factor        float64       // reduction factor, in (0, 1); 0 means 0.1
	Patience      int           // bad steps tolerated before reducing; 0 means 10, negative means 0
	Threshold     float64       // minimal significant improvement, finite; 0 means 1e-4, negative means 0
	ThresholdMode ThresholdMode // ThresholdRel (default, "") or ThresholdAbs
	Cooldown      int           // steps to wait after a reduction, >= 0; default 0
	MinLR         float64       // lower bound of the learning rate, finite and >= 0; default 0
	Eps           float64       // reductions smaller than Eps are skipped, finite; 0 means 1e-8, negative means 0

	p               progress
	best            float64
	numBadEpochs    int
	cooldownCounter int
}

// plateauState is ReduceLROnPlateau's extra saved state.
type plateauState struct {
	Best            jsonfloat.Float `json:"best"`
	NumBadEpochs    int             `json:"num_bad_epochs"`
	CooldownCounter int             `json:"cooldown_counter"`
}

// validate checks a loaded state's counters.
func (st *plateauState) validate() error {
	if st.NumBadEpochs < 0 || st.CooldownCounter < 0 {
		return fmt.Errorf("extra: num_bad_epochs and cooldown_counter must be >= 0, got %d and %d",
			st.NumBadEpochs, st.CooldownCounter)
	}
	return nil
}

// NewReduceLROnPlateau returns a ReduceLROnPlateau for mode with
// PyTorch's defaults written out: Factor 0.1, Patience 10, Threshold 1e-4
// relative, no Cooldown, MinLR 0, Eps 1e-8. A struct literal gets the same
// defaults from its zero values. Fit checks the fields (Validate).
func NewReduceLROnPlateau(mode PlateauMode) *ReduceLROnPlateau {
	s := &ReduceLROnPlateau{
		Mode: mode, Factor: 0.1, Patience: 10, Threshold: 1e-4, ThresholdMode: ThresholdRel, Eps: 1e-8,
	}
	return s
}

// withDefaults returns the configuration the schedule follows: zero fields
// replaced by PyTorch's defaults and negative Patience, Threshold and Eps by 0.
func (s *ReduceLROnPlateau) withDefaults() ReduceLROnPlateau {
	return ReduceLROnPlateau{
		Mode: orDefault(s.Mode, PlateauMin), Factor: orDefault(s.Factor, 0.1),
		Patience: orDefaultOrNone(s.Patience, 10), Threshold: orDefaultOrNone(s.Threshold, 1e-4),
		ThresholdMode: orDefault(s.ThresholdMode, ThresholdRel), Cooldown: s.Cooldown, MinLR: s.MinLR,
		Eps: orDefaultOrNone(s.Eps, 1e-8),
	}
}

// Validate reports the first invalid field, naming it and its valid values.
func (s *ReduceLROnPlateau) Validate() error {
	c := s.withDefaults()
	switch c.Mode {
	case PlateauMin, PlateauMax:
	default:
		return fmt.Errorf("optim.ReduceLROnPlateau.Mode: must be %q (default, \"\") or %q, got %q", PlateauMin, PlateauMax, s.Mode)
	}
	if !(c.Factor > 0 && c.Factor < 1) {
		return fmt.Errorf("optim.ReduceLROnPlateau.Factor: must be in (0, 1) (0 means 0.1), got %v", s.Factor)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"Threshold", c.Threshold}, {"Eps", c.Eps}} {
		if !finite(f.v) {
			return fmt.Errorf("optim.ReduceLROnPlateau.%s: must be finite, got %v", f.name, f.v)
		}
	}
	switch c.ThresholdMode {
	case ThresholdRel, ThresholdAbs:
	default:
		return fmt.Errorf("optim.ReduceLROnPlateau.ThresholdMode: must be %q (default, \"\") or %q, got %q",
			ThresholdRel, ThresholdAbs, s.ThresholdMode)
	}
	if c.Cooldown < 0 {
		return fmt.Errorf("optim.ReduceLROnPlateau.Cooldown: must be >= 0, got %d", s.Cooldown)
	}
	if !finite(c.MinLR) || c.MinLR < 0 {
		return fmt.Errorf("optim.ReduceLROnPlateau.MinLR: must be a finite number >= 0, got %v", s.MinLR)
	}
	return nil
}

// NeedsMetric implements MetricScheduler: Step must be given the metric.
func (s *ReduceLROnPlateau) NeedsMetric() bool { return true }

// Start implements Scheduler.
func (s *ReduceLROnPlateau) Start(baseLR float64) float64 {
	mustBeValid(s.Validate())
	s.best = math.Inf(1)
	if s.withDefaults().Mode == PlateauMax {
		s.best = math.Inf(-1)
	}
	s.numBadEpochs, s.cooldownCounter = 0, 0
	return s.p.start(baseLR, baseLR)
}

// isBetter is PyTorch's is_better(a, best).
func (s *ReduceLROnPlateau) isBetter(c *ReduceLROnPlateau, a float64) bool {
	switch {
	case c.Mode == PlateauMin && c.ThresholdMode == ThresholdRel:
		return a < s.best*(1-c.Threshold)
	case c.Mode == PlateauMin:
		return a < s.best-c.Threshold
	case c.ThresholdMode == ThresholdRel:
		return a > s.best*(c.Threshold+1)
	default:
		return a > s.best+c.Threshold
	}
}

// Step implements Scheduler; metric is the monitored value.
func (s *ReduceLROnPlateau) Step(metric float64) float64 {
	s.p.advance("ReduceLROnPlateau")
	c := s.withDefaults()
	if s.isBetter(&c, metric) {
		s.best = metric
		s.numBadEpochs = 0
	} else {
		s.numBadEpochs++
	}
	if s.cooldownCounter > 0 {
		s.cooldownCounter--
		s.numBadEpochs = 0 // bad steps during cooldown are ignored.
	}
	if s.numBadEpochs > c.Patience {
		oldLR := float64(s.p.LR)
		newLR := math.Max(oldLR*c.Factor, c.MinLR)
		if oldLR-newLR > c.Eps {
			s.p.set(newLR)
		}
		s.cooldownCounter = c.Cooldown
		s.numBadEpochs = 0
	}
	return float64(s.p.LR)
}

// LR implements Scheduler.
func (s *ReduceLROnPlateau) LR() float64 { return float64(s.p.LR) }

// StateAfterStep implements StepPeeker: the state after Step(metric), taken
// on a copy.
func (s *ReduceLROnPlateau) StateAfterStep(metric float64) ([]byte, error) {
	next := *s
	next.Step(metric)
	return next.State()
}

// State implements Scheduler.
func (s *ReduceLROnPlateau) State() ([]byte, error) {
	extra := plateauState{Best: jsonfloat.Float(s.best), NumBadEpochs: s.numBadEpochs, CooldownCounter: s.cooldownCounter}
	return marshalScheduler("ReduceLROnPlateau", s, s.p, extra)
}

// LoadState implements Scheduler.
func (s *ReduceLROnPlateau) LoadState(data []byte) error {
	var extra plateauState
	if err := unmarshalScheduler("ReduceLROnPlateau", data, s, &s.p, &extra, (*ReduceLROnPlateau).Validate); err != nil {
		return err
	}
	s.best, s.numBadEpochs, s.cooldownCounter = float64(extra.Best), extra.NumBadEpochs, extra.CooldownCounter
	return nil
}
