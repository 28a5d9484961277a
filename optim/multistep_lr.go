package optim

import (
	"fmt"
	"math"
)

// MultiStepLR multiplies the learning rate by Gamma at each milestone step,
// like torch.optim.lr_scheduler.MultiStepLR: a milestone listed k times
// multiplies it by Gamma^k. Milestones is required; Fit checks the fields
// (Validate).
type MultiStepLR struct {
	Milestones []int   // steps at which to decay, each >= 1, in any order; required
	Gamma      float64 // multiplicative decay, finite and > 0; 0 means 0.1

	p progress
}

// NewMultiStepLR returns a MultiStepLR with these fields, unchecked:
// Fit checks them when the module's ConfigureOptimizers returns it (an
// error naming the field), as does Validate.
func NewMultiStepLR(milestones []int, gamma float64) *MultiStepLR {
	s := &MultiStepLR{Milestones: append([]int(nil), milestones...), Gamma: gamma}
	return s
}

// Validate reports the first invalid field, naming it and its valid range.
func (s *MultiStepLR) Validate() error {
	if len(s.Milestones) == 0 {
		return fmt.Errorf("optim.MultiStepLR.Milestones: must list at least one step >= 1, got none")
	}
	for i, m := range s.Milestones {
		if m < 1 {
			return fmt.Errorf("optim.MultiStepLR.Milestones[%d]: must be >= 1, got %d", i, m)
		}
	}
	if g := orDefault(s.Gamma, 0.1); !finite(g) || g <= 0 {
		return fmt.Errorf("optim.MultiStepLR.Gamma: must be a finite number > 0 (0 means 0.1), got %v", s.Gamma)
	}
	return nil
}

// Start implements Scheduler.
func (s *MultiStepLR) Start(baseLR float64) float64 {
	mustBeValid(s.Validate())
	return s.p.start(baseLR, baseLR)
}

// Step implements Scheduler.
func (s *MultiStepLR) Step(float64) float64 {
	e := s.p.advance("MultiStepLR")
	count := 0
	for _, m := range s.Milestones {
		if m == e {
			count++
		}
	}
	lr := float64(s.p.LR)
	if count > 0 {
		// PyTorch: group['lr'] * gamma ** milestones[last_epoch].
		lr *= math.Pow(orDefault(s.Gamma, 0.1), float64(count))
	}
	return s.p.set(lr)
}

// LR implements Scheduler.
func (s *MultiStepLR) LR() float64 { return float64(s.p.LR) }

// State implements Scheduler.
func (s *MultiStepLR) State() ([]byte, error) {
	return marshalScheduler("MultiStepLR", s, s.p, nil)
}

// LoadState implements Scheduler.
func (s *MultiStepLR) LoadState(data []byte) error {
	return unmarshalScheduler("MultiStepLR", data, s, &s.p, nil, (*MultiStepLR).Validate)
}
