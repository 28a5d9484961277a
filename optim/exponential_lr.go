package optim

import "fmt"

// ExponentialLR multiplies the learning rate by Gamma every step, like
// torch.optim.lr_scheduler.ExponentialLR.
type ExponentialLR struct {
	Gamma float64 // multiplicative decay, finite and > 0; required (PyTorch has no default)

	p progress
}

// NewExponentialLR returns an ExponentialLR with these fields, unchecked:
// Fit checks them when the module's ConfigureOptimizers returns it (an
// error naming the field), as does Validate.
func NewExponentialLR(gamma float64) *ExponentialLR {
	s := &ExponentialLR{Gamma: gamma}
	return s
}

// Validate reports the first invalid field, naming it and its valid range.
func (s *ExponentialLR) Validate() error {
	if !finite(s.Gamma) || s.Gamma <= 0 {
		return fmt.Errorf("optim.ExponentialLR.Gamma: must be a finite number > 0 (required), got %v", s.Gamma)
	}
	return nil
}

// Start implements Scheduler.
func (s *ExponentialLR) Start(baseLR float64) float64 {
	mustBeValid(s.Validate())
	return s.p.start(baseLR, baseLR)
}

// Step implements Scheduler.
func (s *ExponentialLR) Step(float64) float64 {
	s.p.advance("ExponentialLR")
	return s.p.set(float64(s.p.LR) * s.Gamma)
}

// LR implements Scheduler.
func (s *ExponentialLR) LR() float64 { return float64(s.p.LR) }

// State implements Scheduler.
func (s *ExponentialLR) State() ([]byte, error) {
	return marshalScheduler("ExponentialLR", s, s.p, nil)
}

// LoadState implements Scheduler.
func (s *ExponentialLR) LoadState(data []byte) error {
	return unmarshalScheduler("ExponentialLR", data, s, &s.p, nil, (*ExponentialLR).Validate)
}
