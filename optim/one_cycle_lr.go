package optim

import (
	"fmt"
	"math"
)

// AnnealStrategy names how OneCycleLR moves between two learning rates.
type AnnealStrategy string

// The annealing strategies of OneCycleLR.
const (
	AnnealCos    AnnealStrategy = "cos"
	AnnealLinear AnnealStrategy = "linear"
)

// OneCycleLR implements the 1cycle policy like
// torch.optim.lr_scheduler.OneCycleLR: the learning rate rises from
// MaxLR/DivFactor to MaxLR over the first PctStart of TotalSteps, then
// anneals to MaxLR/DivFactor/FinalDivFactor (with ThreePhase, it first comes
// back down to MaxLR/DivFactor symmetrically). It ignores the optimizer's
// base LR. Momentum is not cycled.
//
// The cycle ends at step TotalSteps: as PyTorch raises ("Tried to step N
// times. The specified number of total steps is M"), a step past it is
// refused (CheckStep says so beforehand; Fit fails with that error, and
// Step panics with it).
//
// MaxLR and TotalSteps are required; the other fields' zero values are
// PyTorch's defaults, so &optim.OneCycleLR{MaxLR: 0.1, TotalSteps: 1000} is
// PyTorch's OneCycleLR(opt, 0.1, total_steps=1000). Fit checks the fields
// (Validate).
type OneCycleLR struct {
	MaxLR          float64        // peak learning rate, finite and > 0; required
	TotalSteps     int            // length of the cycle in steps, >= 2; required
	PctStart       float64        // fraction of the cycle spent rising, in (0, 1); 0 means 0.3
	Anneal         AnnealStrategy // AnnealCos (default, "") or AnnealLinear
	DivFactor      float64        // initial LR = MaxLR/DivFactor, finite and > 0; 0 means 25
	FinalDivFactor float64        // final LR = initial LR/FinalDivFactor, finite and > 0; 0 means 1e4
	ThreePhase     bool           // come back to the initial LR before the final annealing

	p progress
}

// NewOneCycleLR returns a OneCycleLR with PyTorch's defaults
// written out: PctStart 0.3, cosine annealing, DivFactor 25, FinalDivFactor
// 1e4, two phases (a struct literal's zero values mean the same). Fit
// checks the fields (Validate).
func NewOneCycleLR(maxLR float64, totalSteps int) *OneCycleLR {
	s := &OneCycleLR{
		MaxLR: maxLR, TotalSteps: totalSteps, PctStart: 0.3, Anneal: AnnealCos,
		DivFactor: 25, FinalDivFactor: 1e4,
	}
	return s
}

// withDefaults returns the configuration the cycle follows, zero fields
// replaced by PyTorch's defaults.
func (s *OneCycleLR) withDefaults() OneCycleLR {
	return OneCycleLR{
		MaxLR: s.MaxLR, TotalSteps: s.TotalSteps, PctStart: orDefault(s.PctStart, 0.3),
		Anneal: orDefault(s.Anneal, AnnealCos), DivFactor: orDefault(s.DivFactor, 25),
		FinalDivFactor: orDefault(s.FinalDivFactor, 1e4), ThreePhase: s.ThreePhase,
	}
}

// Validate reports the first invalid field, naming it and its valid range.
func (s *OneCycleLR) Validate() error {
	c := s.withDefaults()
	return c.validate()
}

// validate checks a configuration with its defaults applied.
func (s *OneCycleLR) validate() error {
	positive := func(field string, v float64) error {
		if !finite(v) || v <= 0 {
			return fmt.Errorf("optim.OneCycleLR.%s: must be a finite number > 0, got %v", field, v)
		}
		return nil
	}
	if err := positive("MaxLR", s.MaxLR); err != nil {
		return err
	}
	if s.TotalSteps < 2 {
		return fmt.Errorf("optim.OneCycleLR.TotalSteps: must be >= 2, got %d", s.TotalSteps)
	}
	if !(s.PctStart > 0 && s.PctStart < 1) {
		return fmt.Errorf("optim.OneCycleLR.PctStart: must be in (0, 1) (0 means 0.3), got %v", s.PctStart)
	}
	switch s.Anneal {
	case AnnealCos, AnnealLinear:
	default:
		return fmt.Errorf("optim.OneCycleLR.Anneal: must be %q (default, \"\") or %q, got %q", AnnealCos, AnnealLinear, s.Anneal)
	}
	if err := positive("DivFactor", s.DivFactor); err != nil {
		return err
	}
	if err := positive("FinalDivFactor", s.FinalDivFactor); err != nil {
		return err
	}
	start := 0.0
	for i, ph := range s.phases() {
		if !(ph.end > start) {
			return fmt.Errorf("optim.OneCycleLR.PctStart: PctStart*TotalSteps must be > 1 and leave steps to every phase, "+
				"got PctStart %v, TotalSteps %d (phase %d is empty)", s.PctStart, s.TotalSteps, i)
		}
		start = ph.end
	}
	return nil
}

// oneCyclePhase is one segment of the cycle: the LR goes from startLR to
// endLR, reaching it at step end.
type oneCyclePhase struct {
	end            float64
	startLR, endLR float64
}

// phases returns the cycle's segments as PyTorch's _schedule_phases.
func (s *OneCycleLR) phases() []oneCyclePhase {
	initial := s.MaxLR / s.DivFactor
	minLR := initial / s.FinalDivFactor
	total := float64(s.TotalSteps)
	if s.ThreePhase {
		return []oneCyclePhase{
			{end: s.PctStart*total - 1, startLR: initial, endLR: s.MaxLR},
			{end: 2*s.PctStart*total - 2, startLR: s.MaxLR, endLR: initial},
			{end: total - 1, startLR: initial, endLR: minLR},
		}
	}
	return []oneCyclePhase{
		{end: s.PctStart*total - 1, startLR: initial, endLR: s.MaxLR},
		{end: total - 1, startLR: s.MaxLR, endLR: minLR},
	}
}

// lrAt returns PyTorch's OneCycleLR.get_lr for step.
func (s *OneCycleLR) lrAt(step int) float64 {
	phases := s.phases()
	x := float64(step)
	start := 0.0
	for i, ph := range phases {
		if x <= ph.end || i == len(phases)-1 {
			pct := (x - start) / (ph.end - start)
			if s.Anneal == AnnealLinear {
				return float64((ph.endLR-ph.startLR)*pct) + ph.startLR
			}
			cosOut := math.Cos(math.Pi*pct) + 1
			return ph.endLR + float64((ph.startLR-ph.endLR)/2*cosOut)
		}
		start = ph.end
	}
	panic("unreachable")
}

// Start implements Scheduler; baseLR is ignored (the cycle starts at
// MaxLR/DivFactor).
func (s *OneCycleLR) Start(float64) float64 {
	mustBeValid(s.Validate())
	c := s.withDefaults()
	initial := c.MaxLR / c.DivFactor
	return s.p.start(initial, c.lrAt(0))
}

// CheckStep implements BoundedScheduler: an error, naming the step and
// TotalSteps, when the next Step would go past the cycle's end.
func (s *OneCycleLR) CheckStep() error {
	if next := s.p.Epoch + 1; next > s.TotalSteps {
		return fmt.Errorf("optim.OneCycleLR: step %d is past TotalSteps %d, where the cycle ends "+
			"(PyTorch raises \"Tried to step %d times. The specified number of total steps is %d\"): "+
			"make TotalSteps the number of scheduler steps the run takes (Trainer.EstimatedSteppingBatches for Interval step)",
			next, s.TotalSteps, next+1, s.TotalSteps)
	}
	return nil
}

// Step implements Scheduler. A step past TotalSteps panics with
// CheckStep's error, leaving the scheduler as it was.
func (s *OneCycleLR) Step(float64) float64 {
	if s.p.Started {
		if err := s.CheckStep(); err != nil {
			panic(err)
		}
	}
	e := s.p.advance("OneCycleLR")
	c := s.withDefaults()
	return s.p.set(c.lrAt(e))
}

// LR implements Scheduler.
func (s *OneCycleLR) LR() float64 { return float64(s.p.LR) }

// State implements Scheduler.
func (s *OneCycleLR) State() ([]byte, error) { return marshalScheduler("OneCycleLR", s, s.p, nil) }

// LoadState implements Scheduler.
func (s *OneCycleLR) LoadState(data []byte) error {
	return unmarshalScheduler("OneCycleLR", data, s, &s.p, nil, (*OneCycleLR).Validate)
}
