package optim

import "fmt"

// LinearWarmup scales the base learning rate by a factor that moves linearly
// from StartFactor to EndFactor over TotalIters steps and then stays at
// EndFactor, like torch.optim.lr_scheduler.LinearLR (its defaults: 1/3, 1, 5).
// It uses PyTorch's recursive (chainable) form. Zero fields take LinearLR's
// defaults, so &optim.LinearWarmup{TotalIters: 100} warms up from a third of
// the base LR; Fit checks the fields (Validate).
type LinearWarmup struct {
	StartFactor float64 // factor of the first step, in (0, 1]; 0 means 1/3
	EndFactor   float64 // factor from step TotalIters on, in [0, 1]; 0 means 1, negative means 0
	TotalIters  int     // steps to go from StartFactor to EndFactor, >= 1; 0 means 5

	p progress
}

// NewLinearWarmup returns a LinearWarmup with these fields, unchecked:
// Fit checks them when the module's ConfigureOptimizers returns it (an
// error naming the field), as does Validate.
func NewLinearWarmup(startFactor, endFactor float64, totalIters int) *LinearWarmup {
	s := &LinearWarmup{StartFactor: startFactor, EndFactor: endFactor, TotalIters: totalIters}
	return s
}

// withDefaults returns the factors and length the schedule follows.
func (s *LinearWarmup) withDefaults() (start, end float64, iters int) {
	return orDefault(s.StartFactor, 1.0/3), orDefaultOrNone(s.EndFactor, 1), orDefault(s.TotalIters, 5)
}

// Validate reports the first invalid field, naming it and its valid range.
func (s *LinearWarmup) Validate() error {
	start, end, iters := s.withDefaults()
	if !(start > 0 && start <= 1) {
		return fmt.Errorf("optim.LinearWarmup.StartFactor: must be in (0, 1] (0 means 1/3), got %v", s.StartFactor)
	}
	if !(end >= 0 && end <= 1) {
		return fmt.Errorf("optim.LinearWarmup.EndFactor: must be in [0, 1] (0 means 1, negative 0), got %v", s.EndFactor)
	}
	if iters < 1 {
		return fmt.Errorf("optim.LinearWarmup.TotalIters: must be >= 1 (0 means 5), got %d", s.TotalIters)
	}
	return nil
}

// Start implements Scheduler.
func (s *LinearWarmup) Start(baseLR float64) float64 {
	mustBeValid(s.Validate())
	start, _, _ := s.withDefaults()
	return s.p.start(baseLR, baseLR*start)
}

// Step implements Scheduler.
func (s *LinearWarmup) Step(float64) float64 {
	e := s.p.advance("LinearWarmup")
	lr := float64(s.p.LR)
	start, end, iters := s.withDefaults()
	if e <= iters {
		delta := end - start
		denom := float64(float64(iters)*start) + float64(float64(e-1)*delta)
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
