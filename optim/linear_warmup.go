package optim

import "fmt"

// LinearWarmup scales the base learning rate by a factor that moves linearly
// from StartFactor to EndFactor over TotalIters steps and then stays at
// EndFactor, like torch.optim.lr_scheduler.LinearLR (its defaults: 1/3, 1, 5).
// It uses PyTorch's recursive (chainable) form.
type LinearWarmup struct {
	StartFactor float64 // factor of the first step, in (0, 1]
	EndFactor   float64 // factor from step TotalIters on, in [0, 1]
	TotalIters  int     // steps to go from StartFactor to EndFactor, >= 1

	p progress
}

// NewLinearWarmup returns a validated LinearWarmup.
func NewLinearWarmup(startFactor, endFactor float64, totalIters int) (*LinearWarmup, error) {
	s := &LinearWarmup{StartFactor: startFactor, EndFactor: endFactor, TotalIters: totalIters}
	return s, s.Validate()
}

// Validate reports the first invalid field, naming it and its valid range.
func (s *LinearWarmup) Validate() error {
	if !(s.StartFactor > 0 && s.StartFactor <= 1) {
		return fmt.Errorf("optim.LinearWarmup.StartFactor: must be in (0, 1], got %v", s.StartFactor)
	}
	if !(s.EndFactor >= 0 && s.EndFactor <= 1) {
		return fmt.Errorf("optim.LinearWarmup.EndFactor: must be in [0, 1], got %v", s.EndFactor)
	}
	if s.TotalIters < 1 {
		return fmt.Errorf("optim.LinearWarmup.TotalIters: must be >= 1, got %d", s.TotalIters)
	}
	return nil
}

// Start implements Scheduler.
func (s *LinearWarmup) Start(baseLR float64) float64 {
	mustBeValid(s.Validate())
	return s.p.start(baseLR, baseLR*s.StartFactor)
}

// Step implements Scheduler.
func (s *LinearWarmup) Step(float64) float64 {
	e := s.p.advance("LinearWarmup")
	lr := float64(s.p.LR)
	if e <= s.TotalIters {
		delta := s.EndFactor - s.StartFactor
		denom := float64(float64(s.TotalIters)*s.StartFactor) + float64(float64(e-1)*delta)
		lr *= 1 + delta/denom
	}
	return s.p.set(lr)
}

// LR implements Scheduler.
func (s *LinearWarmup) LR() float64 { return float64(s.p.LR) }

// State implements Scheduler.
func (s *LinearWarmup) State() ([]byte, error) {
	return marshalScheduler("LinearWarmup", s, s.p, nil)
}

// LoadState implements Scheduler.
func (s *LinearWarmup) LoadState(data []byte) error {
	return unmarshalScheduler("LinearWarmup", data, s, &s.p, nil, (*LinearWarmup).Validate)
}
