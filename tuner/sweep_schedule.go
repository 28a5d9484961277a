package tuner

import (
	"encoding/json"
	"fmt"
)

// Sweep modes for LRFindOptions.Mode.
const (
	// Exponential multiplies the learning rate by the same factor each step.
	Exponential = "exponential"
	// Linear adds the same amount each step.
	Linear = "linear"
)

// sweepSchedule is the optim.Scheduler of the sweep: Lightning's _ExponentialLR
// and _LinearLR with base LR min. Step k (counted from 0) runs at min for k = 0
// and at min·(max/min)^((k+1)/n) (or min + (k+1)/n·(max-min)) after.
type sweepSchedule struct {
	mode     string
	min, max float64
	n        int
	// Steps is the number of Step calls since Start (PyTorch's last_epoch).
	Steps int     `json:"steps"`
	Rate  float64 `json:"lr"`
}

// lrAt returns the learning rate after k scheduler steps.
func (s *sweepSchedule) lrAt(k int) float64 {
	if k == 0 {
		return s.min
	}
	r := float64(k+1) / float64(s.n)
	if s.mode == Linear {
		return s.min + r*(s.max-s.min)
	}
	return s.min * pow(s.max/s.min, r)
}

// Start begins the sweep at min, whatever the optimizer's configured rate.
func (s *sweepSchedule) Start(float64) float64 {
	s.Steps, s.Rate = 0, s.min
	return s.Rate
}

// Step moves to the next learning rate of the sweep.
func (s *sweepSchedule) Step(float64) float64 {
	s.Steps++
	s.Rate = s.lrAt(s.Steps)
	return s.Rate
}

// LR returns the current learning rate.
func (s *sweepSchedule) LR() float64 { return s.Rate }

// State returns the sweep's position as JSON.
func (s *sweepSchedule) State() ([]byte, error) { return json.Marshal(s) }

// LoadState restores a position written by State.
func (s *sweepSchedule) LoadState(b []byte) error {
	if err := json.Unmarshal(b, s); err != nil {
		return fmt.Errorf("tuner: learning-rate sweep state: %w", err)
	}
	return nil
}
