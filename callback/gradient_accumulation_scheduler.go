package callback

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/voltml/volt"
)

// GradientAccumulationScheduler changes the number of batches accumulated
// per optimizer step as training progresses (Lightning's
// GradientAccumulationScheduler): Scheduling {0: 1, 4: 2, 8: 4} accumulates
// 1 batch in epochs 0–3, 2 in epochs 4–7 and 4 from epoch 8 on. Epochs before
// the first key use 1. The trainer's own AccumulateGradBatches is restored
// when Fit ends.
type GradientAccumulationScheduler struct {
	configured[GradientAccumulationSchedulerConfig]
	epochs   []int // sorted keys of Scheduling
	factors  []int
	original int
}

// GradientAccumulationSchedulerConfig configures GradientAccumulationScheduler.
type GradientAccumulationSchedulerConfig struct {
	// Scheduling maps an epoch (>= 0) to the number of batches (>= 1) to
	// accumulate from that epoch on. It must not be empty.
	Scheduling map[int]int
}

// NewGradientAccumulationScheduler returns the callback for cfg.
// A bad field is no error here: NewTrainer reports it, naming the field, as
// does Validate.
func NewGradientAccumulationScheduler(cfg GradientAccumulationSchedulerConfig) *GradientAccumulationScheduler {
	return newCallback(cfg, newGradientAccumulationScheduler)
}

// newGradientAccumulationScheduler builds the callback for cfg, filling in
// the defaults its zero values stand for, or reports its bad fields.
func newGradientAccumulationScheduler(cfg *GradientAccumulationSchedulerConfig) (*GradientAccumulationScheduler, error) {
	if len(cfg.Scheduling) == 0 {
		return nil, fmt.Errorf("callback.NewGradientAccumulationScheduler: GradientAccumulationSchedulerConfig.Scheduling: must not be empty; e.g. {0: 1, 4: 2}")
	}
	s := &GradientAccumulationScheduler{}
	var errs []string
	for _, epoch := range slices.Sorted(maps.Keys(cfg.Scheduling)) {
		factor := cfg.Scheduling[epoch]
		if epoch < 0 {
			errs = append(errs, fmt.Sprintf("GradientAccumulationSchedulerConfig.Scheduling: epoch keys must be >= 0, got %d", epoch))
		}
		if factor < 1 {
			errs = append(errs, fmt.Sprintf("GradientAccumulationSchedulerConfig.Scheduling[%d]: the number of batches must be >= 1, got %d", epoch, factor))
		}
		s.epochs = append(s.epochs, epoch)
		s.factors = append(s.factors, factor)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("callback.NewGradientAccumulationScheduler: %s", strings.Join(errs, "; "))
	}
	return s, nil
}

// Factor returns the number of batches accumulated in epoch.
func (s *GradientAccumulationScheduler) Factor(epoch int) int {
	f := 1
	for i, e := range s.epochs {
		if e <= epoch {
			f = s.factors[i]
		}
	}
	return f
}

// OnFitStart remembers the trainer's setting, to restore it at Teardown.
func (s *GradientAccumulationScheduler) OnFitStart(t *volt.Trainer) error {
	s.original = t.AccumulateGradBatches()
	return nil
}

// OnTrainEpochStart sets the epoch's accumulation.
func (s *GradientAccumulationScheduler) OnTrainEpochStart(t *volt.Trainer) error {
	t.SetAccumulateGradBatches(s.Factor(t.CurrentEpoch()))
	return nil
}

// Teardown restores the trainer's setting after Fit, also after a failure.
func (s *GradientAccumulationScheduler) Teardown(t *volt.Trainer, stage volt.Stage) error {
	if stage == volt.StageFit && s.original > 0 {
		t.SetAccumulateGradBatches(s.original)
		s.original = 0
	}
	return nil
}

// Interface guards.
var (
	_ volt.OnFitStart        = (*GradientAccumulationScheduler)(nil)
	_ volt.OnTrainEpochStart = (*GradientAccumulationScheduler)(nil)
	_ volt.Teardown          = (*GradientAccumulationScheduler)(nil)
)
