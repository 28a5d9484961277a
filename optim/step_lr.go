package optim

import "fmt"

// StepLR multiplies the learning rate by Gamma every StepSize steps, like
// torch.optim.lr_scheduler.StepLR. StepSize is required; Fit checks the
// fields (Validate).
type StepLR struct {
	StepSize int     // steps between decays, >= 1; required
	Gamma    float64 // multiplicative decay, finite and > 0; 0 means 0.1

	p progress
}

// NewStepLR returns a StepLR with these fields, unchecked:
// Fit checks them when the module's ConfigureOptimizers returns it (an
// error naming the field), as does Validate.
func NewStepLR(stepSize int, gamma float64) *StepLR {
	s := &StepLR{StepSize: stepSize, Gamma: gamma}
	return s
}

// Validate reports the first invalid field, naming it and its valid range.
func (s *StepLR) Validate() error {
	if s.StepSize < 1 {
		return fmt.Errorf("optim.StepLR.StepSize: must be >= 1, got %d", s.StepSize)
	}
	if g := orDefault(s.Gamma, 0.1); !finite(g) || g <= 0 {
		return fmt.Errorf("optim.StepLR.Gamma: must be a finite number > 0 (0 means 0.1), got %v", s.Gamma)
	}
	return nil
}

// Start implements Scheduler.
func (s *StepLR) Start(baseLR float64) float64 {
	mustBeValid(s.Validate())
	return s.p.start(baseLR, baseLR)
}

// Step implements Scheduler.
func (s *StepLR) Step(float64) float64 {
	e := s.p.advance("StepLR")
	lr := float64(s.p.LR)
	if e%s.StepSize == 0 {
		lr *= orDefault(s.Gamma, 0.1)
	}
	return s.p.set(lr)
}

// LR implements Scheduler.
func (s *StepLR) LR() float64 { return float64(s.p.LR) }

// State implements Scheduler.
func (s *StepLR) State() ([]byte, error) { return marshalScheduler("StepLR", s, s.p, nil) }

// LoadState implements Scheduler.
func (s *StepLR) LoadState(data []byte) error {
	return unmarshalScheduler("StepLR", data, s, &s.p, nil, (*StepLR).Validate)
}
