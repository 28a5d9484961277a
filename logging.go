package volt

import (
	"errors"
	"fmt"
	"maps"

	"github.com/voltml/volt/logger"
)

// HParamser is implemented by modules and data modules whose hyperparameters
// should be recorded by the loggers at the start of Fit (Lightning's
// save_hyperparameters).
type HParamser interface{ HParams() map[string]any }

// publishStep makes a freshly logged step value visible to callbacks and the
// progress bar. The loggers get training step values at the logging cadence
// (flushStepLogs), from the metrics themselves. As in Lightning, the progress
// bar names a value logged both per step and per epoch name_step and
// name_epoch, and evaluation step values do not reach CallbackMetrics.
func (t *Trainer) publishStep(m *metric) {
	if !m.opts.onStep {
		return
	}
	if m.opts.progBar {
		t.logs.progBarM[m.stepKey] = m.step
	}
	if t.state.Stage != RunningTrain {
		return
	}
	t.logs.callbackM[m.stepKey] = m.step
	t.logs.callbackM[m.key] = m.step
}

// logStep is the step at which metrics are recorded, Lightning's count of
// batches that stepped (fit_loop.epoch_loop._batches_that_stepped): during
// Fit the index of the last optimization step (so a step's values and its
// epoch's values share a row); outside Fit (Validate, Test) the count as a
// Fit leaves it, one past that index (0 before any Fit).
func (t *Trainer) logStep() int64 {
	if t.state.Fn != StageFit {
		return t.progress.OptimizerSteps
	}
	return max(t.progress.OptimizerSteps-1, 0)
}

// flushStepLogs sends the training step values logged since the last flush
// (or skip) to the loggers.
func (t *Trainer) flushStepLogs() error {
	row, err := t.stepRow(t.logs.trainRes)
	if err != nil {
		return err
	}
	return t.sendToLoggers(row)
}

// flushEvalStepLogs sends the evaluation step values of the batch just run
// to the loggers, at every batch whatever Config.LogEveryNSteps, as
// Lightning does: at step idx, the loader's count of evaluation batches
// before this one in the run (Fit, Validate or Test), and without "epoch".
func (t *Trainer) flushEvalStepLogs(res *results, idx int) error {
	row, err := t.stepRow(res)
	if err != nil {
		return err
	}
	defer t.profile(actLogMetrics)()
	return t.logRowAt(row, int64(idx), false)
}

// stepRow returns the step values of res logged since the last row, and
// publishes those of metric objects (computed only here).
func (t *Trainer) stepRow(res *results) (map[string]float64, error) {
	row := map[string]float64{}
	if err := res.stepValues(row); err != nil {
		return nil, err
	}
	for _, m := range res.order {
		if _, ok := row[m.stepKey]; ok && m.isObject() {
			t.publishStep(m) // a metric object's step value exists on the cadence only
		}
	}
	return row, nil
}

// sendEpochLogs sends, at a training epoch's end, the step values logged
// since the last row, then the epoch values.
func (t *Trainer) sendEpochLogs() error {
	if err := t.flushStepLogs(); err != nil {
		return err
	}
	epochLogs := map[string]float64{}
	t.logs.trainRes.epochValues(t.logs.callbackM, epochLogs, t.logs.progBarM)
	return t.sendToLoggers(epochLogs)
}

// sendEndedEpochLogs is sendEpochLogs for the epoch that a checkpoint
// taken in its OnTrainEpochEnd ended, in the run resumed from it: the run
// it resumes would have sent them after the checkpoint. The rows carry
// that epoch's index, as they would have.
func (t *Trainer) sendEndedEpochLogs() error {
	p := &t.progress
	saved := p.Epoch.Total
	at := p.At
	defer func() { p.Epoch.Total, p.At = saved, at }()
	p.Epoch.Total.Completed = max(p.Epoch.Total.Completed-1, 0)
	p.At = PointTrainEpochEnd
	if err := t.logs.trainRes.computeMetrics(t.logs.trainMetrics); err != nil {
		return err
	}
	return t.sendEpochLogs()
}

// endStepLogs sends the step values of the batch that just ended to the
// loggers when due (at the LogEveryNSteps cadence), else drops them.
func (t *Trainer) endStepLogs(due bool) error {
	if due {
		return t.flushStepLogs()
	}
	t.skipStepLogs()
	return nil
}

// skipStepLogs drops the step values of a batch that is not at the cadence.
func (t *Trainer) skipStepLogs() { _ = t.logs.trainRes.stepValues(nil) }

// sendToLoggers adds the epoch (during Fit) and sends values to every logger.
// At the end of a training epoch it also flushes them (Logger.Save), so that
// a crash loses at most the current epoch's rows (the loggers also flush on
// their own every n steps).
func (t *Trainer) sendToLoggers(values map[string]float64) error {
	defer t.profile(actLogMetrics)()
	err := t.logRow(values)
	if t.progress.At == PointTrainEpochEnd {
		for _, l := range t.logs.loggers {
			if serr := l.Save(); serr != nil {
				err = errors.Join(err, fmt.Errorf("logger %T: %w", l, serr))
			}
		}
	}
	return err
}

// logRow sends one row of values to every logger at the current logging
// step, with the epoch.
func (t *Trainer) logRow(values map[string]float64) error {
	return t.logRowAt(values, t.logStep(), true)
}

// logRowAt sends one row of values to every logger at step, adding the
// epoch when withEpoch is set.
func (t *Trainer) logRowAt(values map[string]float64, step int64, withEpoch bool) error {
	if len(values) == 0 {
		return nil
	}
	maps.Copy(t.logs.loggedM, values)
	if len(t.logs.loggers) == 0 {
		return nil
	}
	row := maps.Clone(values)
	if withEpoch {
		row["epoch"] = float64(t.CurrentEpoch())
	}
	var errs []error
	for _, l := range t.logs.loggers {
		if err := l.LogMetrics(row, step); err != nil {
			errs = append(errs, fmt.Errorf("logger %T: %w", l, err))
		}
	}
	return errors.Join(errs...)
}

// logHyperparams records the module's and data module's hyperparameters once.
func (t *Trainer) logHyperparams(dm DataModule) error {
	if t.logs.hparamsWritten || len(t.logs.loggers) == 0 {
		return nil
	}
	params := map[string]any{}
	if h, ok := t.module.(HParamser); ok {
		maps.Copy(params, h.HParams())
	}
	if h, ok := dm.(HParamser); ok {
		maps.Copy(params, h.HParams())
	}
	if len(params) == 0 {
		return nil
	}
	t.logs.hparamsWritten = true
	var errs []error
	for _, l := range t.logs.loggers {
		if err := l.LogHyperparams(params); err != nil {
			errs = append(errs, fmt.Errorf("logger %T: %w", l, err))
		}
	}
	return errors.Join(errs...)
}

// finalizeLoggers flushes the loggers at the end of a run.
func (t *Trainer) finalizeLoggers() error {
	status := logger.StatusSuccess
	switch t.state.Status {
	case StatusInterrupted:
		status = logger.StatusInterrupted
	case StatusFailed:
		status = logger.StatusFailed
	}
	var errs []error
	for _, l := range t.logs.loggers {
		if err := l.Finalize(status); err != nil {
			errs = append(errs, fmt.Errorf("logger %T: %w", l, err))
		}
	}
	return errors.Join(errs...)
}
