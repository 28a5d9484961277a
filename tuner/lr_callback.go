package tuner

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/voltml/volt"
	"github.com/voltml/volt/logger"
	"github.com/voltml/volt/report"
)

// LRFinder is LRFind as a callback (Lightning's LearningRateFinder): when a
// fresh Fit starts, it sweeps, records the Result and sets the suggested rate
// on the trainer's optimizer (restarting its scheduler from it, if any) and,
// through Options.Apply, on the module. A Fit that resumes (global step > 0)
// is left alone. Unless Options.CSVPath names another file, the curve is
// saved as lr_find.csv (report.LRFindFileName) in the run's log directory
// (that of the trainer's first logger with one), where volt report draws
// it with the suggestion.
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
	if err := saveCurveInRunDir(t, res, f.Options); err != nil {
		return err
	}
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

// saveCurveInRunDir writes the curve as lr_find.csv into the directory of
// t's first logger that has one, unless opts.CSVPath had it written
// elsewhere or no logger has a directory.
func saveCurveInRunDir(t *volt.Trainer, res *LRFindResult, opts LRFindOptions) error {
	if opts.CSVPath != "" {
		return nil
	}
	for _, l := range t.Loggers() {
		if _, ok := l.(logger.Direr); ok {
			// Trainer.LogDir claims the run's directory: the curve belongs
			// to the run that follows.
			return res.WriteCSVFile(filepath.Join(t.LogDir(), report.LRFindFileName))
		}
	}
	return nil
}
