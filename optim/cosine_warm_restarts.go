package optim

import (
	"fmt"
	"math"
)

// CosineAnnealingWarmRestarts anneals the learning rate from the base LR
// towards EtaMin along a cosine and restarts it every period, the first
// period T0 steps long and each next one TMult times longer, like
// torch.optim.lr_scheduler.CosineAnnealingWarmRestarts stepped once per step
// (integer steps).
type CosineAnnealingWarmRestarts struct {
	T0     int     // steps in the first period, >= 1; required
	TMult  int     // period growth factor after each restart, >= 1; 0 means 1
	EtaMin float64 // minimum learning rate, finite and >= 0; default 0

	p    progress
	tCur int // steps since the last restart (PyTorch's T_cur)
	tI   int // length of the current period (PyTorch's T_i)
}

// warmRestartsState is CosineAnnealingWarmRestarts' extra saved state.
type warmRestartsState struct {
	TCur int `json:"t_cur"`
	TI   int `json:"t_i"`
}

// validate checks a loaded state: a period of at least one step and a
// position inside it, or the zero state of a scheduler not yet started.
func (w *warmRestartsState) validate() error {
	if *w == (warmRestartsState{}) {
		return nil
	}
	if w.TI < 1 || w.TCur < 0 || w.TCur >= w.TI {
		return fmt.Errorf("extra: t_i must be >= 1 and t_cur in [0, t_i), got t_i %d, t_cur %d", w.TI, w.TCur)
	}
	return nil
}

// NewCosineAnnealingWarmRestarts returns a CosineAnnealingWarmRestarts with these fields, unchecked:
// Fit checks them when the module's ConfigureOptimizers returns it (an
// error naming the field), as does Validate.
func NewCosineAnnealingWarmRestarts(t0, tMult int, etaMin float64) *CosineAnnealingWarmRestarts {
	s := &CosineAnnealingWarmRestarts{T0: t0, TMult: tMult, EtaMin: etaMin}
	return s
}

// Validate reports the first invalid field, naming it and its valid range.
func (s *CosineAnnealingWarmRestarts) Validate() error {
	if s.T0 < 1 {
		return fmt.Errorf("optim.CosineAnnealingWarmRestarts.T0: must be >= 1, got %d", s.T0)
	}
	if orDefault(s.TMult, 1) < 1 {
		return fmt.Errorf("optim.CosineAnnealingWarmRestarts.TMult: must be >= 1 (0 means 1), got %d", s.TMult)
	}
	if !finite(s.EtaMin) || s.EtaMin < 0 {
		return fmt.Errorf("optim.CosineAnnealingWarmRestarts.EtaMin: must be a finite number >= 0, got %v", s.EtaMin)
	}
	return nil
}

// lr returns PyTorch's closed form for the current position in the period.
func (s *CosineAnnealingWarmRestarts) lr() float64 {
	base := float64(s.p.BaseLR)
	c := 1 + math.Cos(math.Pi*float64(s.tCur)/float64(s.tI))
	return s.EtaMin + float64((base-s.EtaMin)*c)/2
}

// Start implements Scheduler.
func (s *CosineAnnealingWarmRestarts) Start(baseLR float64) float64 {
	mustBeValid(s.Validate())
	s.tCur, s.tI = 0, s.T0
	s.p.start(baseLR, baseLR)
	return s.p.set(s.lr())
}

// Step implements Scheduler.
func (s *CosineAnnealingWarmRestarts) Step(float64) float64 {
	s.p.advance("CosineAnnealingWarmRestarts")
	s.tCur++
	if s.tCur >= s.tI {
		s.tCur -= s.tI
		s.tI *= orDefault(s.TMult, 1)
	}
	return s.p.set(s.lr())
}

// LR implements Scheduler.
func (s *CosineAnnealingWarmRestarts) LR() float64 { return float64(s.p.LR) }

// State implements Scheduler.
func (s *CosineAnnealingWarmRestarts) State() ([]byte, error) {
	return marshalScheduler("CosineAnnealingWarmRestarts", s, s.p, warmRestartsState{TCur: s.tCur, TI: s.tI})
}

// LoadState implements Scheduler.
func (s *CosineAnnealingWarmRestarts) LoadState(data []byte) error {
	var extra warmRestartsState
	if err := unmarshalScheduler("CosineAnnealingWarmRestarts", data, s, &s.p, &extra, (*CosineAnnealingWarmRestarts).Validate); err != nil {
		return err
	}
	s.tCur, s.tI = extra.TCur, extra.TI
	return nil
}
