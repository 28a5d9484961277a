package main

import (
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// stepTimer times the training steps after the first skip (compilation and
// warm-up excluded): the steady-state step time.
type stepTimer struct {
	skip        int
	start, last time.Time
	steps       int
}

// OnTrainBatchEnd notes the time after each batch.
func (s *stepTimer) OnTrainBatchEnd(_ *volt.Trainer, out *volt.StepOutput, _ *data.Batch, batch int) error {
	_ = out.Loss() // the step has run
	switch now := time.Now(); {
	case batch+1 == s.skip:
		s.start = now
	case batch+1 > s.skip:
		s.last, s.steps = now, s.steps+1
	}
	return nil
}

// perStep is the mean time of the timed steps, 0 if none.
func (s *stepTimer) perStep() time.Duration {
	if s.steps == 0 {
		return 0
	}
	return s.last.Sub(s.start) / time.Duration(s.steps)
}
