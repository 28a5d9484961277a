package optim

import (
	"fmt"
	"math"
)

// CosineAnnealingLR anneals the learning rate from the base LR to EtaMin
// along a cosine over TMax steps, and back up over the next TMax, like
// torch.optim.lr_scheduler.CosineAnnealingLR. It uses PyTorch's recursive
// (chainable) form, so its sequence matches PyTorch's to rounding.
type CosineAnnealingLR struct {
	TMax   int     // half period in steps, >= 1; required
	EtaMin float64 // minimum learning rate, finite and >= 0; default 0

	p progress
}

// NewCosineAnnealingLR returns a CosineAnnealingLR with these fields, unchecked:
// Fit checks them when the module's ConfigureOptimizers returns it (an
// error naming the field), as does Validate.
func NewCosineAnnealingLR(tMax int, etaMin float64) *CosineAnnealingLR {
	s := &CosineAnnealingLR{TMax: tMax, EtaMin: etaMin}
	return s
}

// Validate reports the first invalid field, naming it and its valid range.
func (s *CosineAnnealingLR) Validate() error {
	if s.TMax < 1 {
		return fmt.Errorf("optim.CosineAnnealingLR.TMax: must be >= 1, got %d", s.TMax)
	}
	if !finite(s.EtaMin) || s.EtaMin < 0 {
		return fmt.Errorf("optim.CosineAnnealingLR.EtaMin: must be a finite number >= 0, got %v", s.EtaMin)
	}
	return nil
}

// Start implements Scheduler.
func (s *CosineAnnealingLR) Start(baseLR float64) float64 {
	mustBeValid(s.Validate())
	return s.p.start(baseLR, baseLR)
}

// Step implements Scheduler.
func (s *CosineAnnealingLR) Step(float64) float64 {
	e := s.p.advance("CosineAnnealingLR")
	lr, base, tMax := float64(s.p.LR), float64(s.p.BaseLR), float64(s.TMax)
	if pyMod(e-1-s.TMax, 2*s.TMax) == 0 {
		// The bottom of the cosine: PyTorch's recursion would divide by zero.
		lr += float64((base-s.EtaMin)*(1-math.Cos(math.Pi/tMax))) / 2
	} else {
		ratio := (1 + math.Cos(math.Pi*float64(e)/tMax)) / (1 + math.Cos(math.Pi*float64(e-1)/tMax))
		lr = float64(ratio*(lr-s.EtaMin)) + s.EtaMin
	}
	return s.p.set(lr)
}

// LR implements Scheduler.
func (s *CosineAnnealingLR) LR() float64 { return float64(s.p.LR) }

// State implements Scheduler.
func (s *CosineAnnealingLR) State() ([]byte, error) {
	return marshalScheduler("CosineAnnealingLR", s, s.p, nil)
}

// LoadState implements Scheduler.
func (s *CosineAnnealingLR) LoadState(data []byte) error {
	return unmarshalScheduler("CosineAnnealingLR", data, s, &s.p, nil, (*CosineAnnealingLR).Validate)
}
