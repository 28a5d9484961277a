package optim

import "fmt"

// LambdaLR sets the learning rate to the base LR times Fn(step), like
// torch.optim.lr_scheduler.LambdaLR (step 0 is the first step). Fn is not
// serialized: State saves the progress, and LoadState keeps the receiver's
// Fn.
type LambdaLR struct {
	Fn func(step int) float64 `json:"-"` // multiplicative factor of the base LR, not nil

	p progress
}

// NewLambdaLR returns a LambdaLR with these fields, unchecked:
// Fit checks them when the module's ConfigureOptimizers returns it (an
// error naming the field), as does Validate.
func NewLambdaLR(fn func(step int) float64) *LambdaLR {
	s := &LambdaLR{Fn: fn}
	return s
}

// Validate reports the first invalid field, naming it and its valid values.
func (s *LambdaLR) Validate() error {
	if s.Fn == nil {
		return fmt.Errorf("optim.LambdaLR.Fn: must be a non-nil func(step int) float64, got nil")
	}
	return nil
}

// Start implements Scheduler.
func (s *LambdaLR) Start(baseLR float64) float64 {
	mustBeValid(s.Validate())
	return s.p.start(baseLR, baseLR*s.Fn(0))
}

// Step implements Scheduler.
func (s *LambdaLR) Step(float64) float64 {
	e := s.p.advance("LambdaLR")
	return s.p.set(float64(s.p.BaseLR) * s.Fn(e))
}

// LR implements Scheduler.
func (s *LambdaLR) LR() float64 { return float64(s.p.LR) }

// State implements Scheduler.
func (s *LambdaLR) State() ([]byte, error) { return marshalScheduler("LambdaLR", s, s.p, nil) }

// LoadState implements Scheduler; it keeps the receiver's Fn.
func (s *LambdaLR) LoadState(data []byte) error {
	fn := s.Fn
	keep := func(c *LambdaLR) error {
		c.Fn = fn
		return c.Validate()
	}
	return unmarshalScheduler("LambdaLR", data, s, &s.p, nil, keep)
}
