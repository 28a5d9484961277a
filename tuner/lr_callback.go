package tuner

import (
	"context"
	"fmt"

	"github.com/voltml/volt"
)

// LRFinder is LRFind as a callback (Lightning's LearningRateFinder): when a
// fresh Fit starts, it sweeps, records the Result and sets the suggested rate
// on the trainer's optimizer (restarting its scheduler from it, if any) and,
// through Options.Apply, on the module. A Fit that resumes (global step > 0)
// is left alone.
type LRFinder struct {
	// DataModule is the data the sweep trains on (usually the Fit's).
	DataModule volt.DataModule
	Options    LRFindOptions
	// Result is the last sweep's curve and suggestion.
	Result *LRFindResult
}

// OnFitStart runs the sweep and applies its suggestion.
func (f *LRFinder) OnFitStart(t *volt.Trainer) error {
	if t.GlobalStep() > 0 {
		return nil
	}
	res, err := LRFind(context.Background(), t, t.Module(), f.DataModule, f.Options)
	if err != nil {
		return err
	}
	f.Result = res
	if res.SuggestedIndex < 0 {
		return nil
	}
	lr := res.SuggestedLR
	if opts := t.Optimizers(); len(opts) == 1 && opts[0].Scheduler != nil {
		lr = opts[0].Scheduler.Start(lr)
	}
	if err := t.SetLearningRate(0, lr); err != nil {
		return fmt.Errorf("tuner.LRFinder: %w", err)
	}
	return nil
}
