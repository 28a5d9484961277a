package volt

// This file is the logging pipeline: the one path a logged value takes to
// the loggers, stage by stage, each calling only the next. Every stage
// after the trace is a method of the logging object (logging), which the
// loops and the steps tell what happened; it calls nothing of the trainer.
//
//  1. trace: Step.Log (step.go) makes the value an output of the compiled
//     step; Trainer.Log takes a hook's value on the host.
//  2. run: the loop runs the step (compiledSteps.run,
//     compiledEvalSteps.evaluate) and hands its raw outputs over; a
//     graph's first run binds its logged outputs to the loop's result
//     collection (results.bind), and recordTrainStep or recordOutputs
//     reads them on the host.
//  3. accumulate: record adds each value to its metric (metric.add, in
//     result_collection.go), reduces it across ranks (SyncDist) and
//     publishes it to the callbacks and the progress bar (publishStep).
//  4. cadence: training step values go to the loggers every LogEveryNSteps
//     optimizer steps (endStepLogs, told by the epoch loop), evaluation step
//     values after every batch (sendEvalStepRow), epoch values at the end of
//     their loop's epoch (publishEpochValues before the epoch-end hooks,
//     then sendEpochLogs or the evaluation loop's epochRow).
//  5. emit: sendRow gives one row to every logger, at the step and epoch
//     its caller passes.

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/logger"
	"github.com/voltml/volt/profiler"
)

// Logger is logger.Logger, the interface of Config.Loggers, under package
// volt's name: []volt.Logger{tb} needs no import of package logger.
type Logger = logger.Logger

// HParamser is implemented by modules and data modules whose hyperparameters
// should be recorded by the loggers at the start of Fit (Lightning's
// save_hyperparameters).
type HParamser interface{ HParams() map[string]any }

// logging is the logging object: the loggers, what the training loop has
// logged in the epoch in progress, the latest values, and what the trainer
// has said once. Its methods are the pipeline's stages; what they read of
// the trainer it was given when the trainer was made (bind).
type logging struct {
	loggers []logger.Logger

	trainRes *results
	// trainMetrics holds the metric objects the training steps log and the
	// state they carry.
	trainMetrics *metricTable

	// The latest values, as Lightning's trainer keeps them:
	// callbackMetrics every logged value (what callbacks monitor;
	// Trainer.CallbackMetrics), loggedMetrics those sent to the loggers
	// (LoggedMetrics), progressBarMetrics those logged with ProgBar
	// (ProgressBarMetrics).
	callbackMetrics    map[string]float64
	loggedMetrics      map[string]float64
	progressBarMetrics map[string]float64
	// progressBarOrder lists progressBarMetrics' keys in the order they
	// were first logged (Lightning's progress_bar_metrics is a dict, in
	// insertion order); see setProgressBar.
	progressBarOrder []string

	hparamsWritten bool
	saidOnce       map[string]bool

	// What the pipeline reads of the trainer: the run in progress (its
	// function, stage and status), the loop counters (the loggers' step
	// and epoch), the data-parallel job (SyncDist) and where to say
	// things. prof is the run's profiler (run.prof), set and cleared with
	// it.
	state    *State
	progress *Progress
	ddp      *ddpState
	log      *slog.Logger
	prof     profiler.Profiler
}

func newLogging() logging {
	l := logging{
		trainRes: newResults(),
		saidOnce: map[string]bool{},
	}
	l.resetMetrics()
	return l
}

// bind gives l what it reads of its trainer.
func (l *logging) bind(state *State, progress *Progress, ddp *ddpState, log *slog.Logger) {
	l.state, l.progress, l.ddp, l.log = state, progress, ddp, log
}

// resetMetrics forgets the latest values (callback, logged, progress bar),
// as each of Fit, Validate, Test and Predict does when it starts.
func (l *logging) resetMetrics() {
	l.callbackMetrics, l.loggedMetrics, l.progressBarMetrics = map[string]float64{}, map[string]float64{}, map[string]float64{}
	l.progressBarOrder = nil
}

// warnOnce logs msg at warning level the first time key is seen: something
// the run goes on with but the user should know (a checkpoint's missing or
// unknown parts).
func (l *logging) warnOnce(key, msg string, attrs ...any) {
	if l.saidOnce[key] {
		return
	}
	l.saidOnce[key] = true
	l.log.Warn(msg, attrs...)
}

// sayOnce logs msg at info level the first time key is seen.
func (l *logging) sayOnce(key, msg string, attrs ...any) {
	if l.saidOnce[key] {
		return
	}
	l.saidOnce[key] = true
	l.log.Info(msg, attrs...)
}

// profile starts timing action when the run has a profiler (Trainer.profile).
func (l *logging) profile(action string) (stop func()) {
	if l.prof == nil {
		return noStop
	}
	return l.prof.Start(action)
}

// currentEpoch is Trainer.CurrentEpoch.
func (l *logging) currentEpoch() int { return int(l.progress.Epoch.Total.Completed) }

// Log records a value from a hook. In training batch hooks it defaults to
// per-step logging, elsewhere to an epoch value (a mean weighted by batch size).
// Outside a run the call is ignored with a warning. OnStep(false) with
// OnEpoch(false) logs nothing and is refused: the hook fails, as Lightning's
// self.log raises; so are OnStep(true) and OnEpoch(false) in the hooks that
// run once per loop or epoch (OnTrainStart, OnTrainEpochStart,
// OnTrainEpochEnd and their validation and test twins), where Lightning
// allows epoch values only.
func (t *Trainer) Log(name string, value float64, opts ...LogOption) {
	if t.run.res == nil {
		t.sayOnce("log-outside", "volt: Trainer.Log called outside a running loop; value ignored", slog.String("metric", name))
		return
	}
	batchLevel := t.run.inHook == hookOnTrainBatchStart || t.run.inHook == hookOnTrainBatchEnd
	o := resolveLogOptions(defaultLogOptions(t.state.Stage, batchLevel), opts)
	if err := o.allowedIn(name, t.run.inHook); err != nil {
		panic("volt.Trainer." + err.Error())
	}
	if err := o.logsSomething(name); err != nil {
		// Raised in the hook that logs, which fails (a HookError naming
		// it), as Lightning's self.log raises.
		panic("volt.Trainer." + err.Error())
	}
	key := name + dataloaderSuffix(t.run.loader, t.run.numLoaders)
	m, err := t.run.res.entry(key, o)
	if err != nil {
		t.sayOnce("log-"+key, "volt: "+err.Error())
		return
	}
	if err := t.logs.record(m, value, t.run.batchSize); err != nil {
		t.sayOnce("log-sync-"+key, "volt: "+err.Error())
	}
	// Logged in an epoch-end hook: the monitors that follow in the same
	// hook (EarlyStopping, ModelCheckpoint) read the new epoch value.
	if t.run.res.ended {
		m.epochValueTo(t.logs.callbackMetrics, nil, t.logs.setProgressBar)
	}
}

// recordTrainStep records the logged values and gradient norms of one run
// of a compiled training step (trainOutputs), binding them to the training
// results on the graph's first run, with batchSize the weight of each.
func (l *logging) recordTrainStep(out *trainOutputs, batchSize int) error {
	info := out.info
	if !info.bound {
		var err error
		if info.metrics, err = l.trainRes.bind(info.logs, 0, 1); err != nil {
			return err
		}
		norms := defaultLogOptions(RunningTrain, true)
		for _, name := range info.update.NormNames {
			m, err := l.trainRes.entry(name, norms)
			if err != nil {
				return err
			}
			info.normMetrics = append(info.normMetrics, m)
		}
		info.bound = true
	}
	if err := l.recordOutputs(info.metrics, out.logged, batchSize); err != nil {
		return err
	}
	if err := l.trainMetrics.record(out.gid, l.trainRes, 0, 1); err != nil {
		return err
	}
	return l.recordOutputs(info.normMetrics, out.norms, batchSize)
}

// recordOutputs records the logged values a compiled step returned:
// values[i] is ms[i]'s (results.bind).
func (l *logging) recordOutputs(ms []*metric, values []*tensors.Tensor, batchSize int) error {
	for i, m := range ms {
		v, err := engine.Float64(values[i])
		if err != nil {
			return fmt.Errorf("logged value %q: %w", m.key, err)
		}
		if err := l.record(m, v, batchSize); err != nil {
			return err
		}
	}
	return nil
}

// record adds one step value to its metric, reduces it across ranks when it
// is logged with SyncDist, and publishes it. A failed reduction leaves the
// local value, published, and is returned.
func (l *logging) record(m *metric, v float64, batchSize int) error {
	m.add(v, batchSize)
	var err error
	if m.opts.syncDist && l.ddp.on {
		err = l.syncStepValue(m)
	}
	l.publishStep(m)
	return err
}

// publishStep makes a freshly logged step value visible to callbacks and the
// progress bar. The loggers get training step values at the logging cadence
// (endStepLogs), from the metrics themselves. As in Lightning, the progress
// bar names a value logged both per step and per epoch name_step and
// name_epoch, and evaluation step values do not reach CallbackMetrics.
func (l *logging) publishStep(m *metric) {
	if !m.opts.onStep {
		return
	}
	if m.opts.progBar {
		l.setProgressBar(m.stepKey, m.step)
	}
	if l.state.Stage != RunningTrain {
		return
	}
	l.callbackMetrics[m.stepKey] = m.step
	l.callbackMetrics[m.key] = m.step
}

// endStepLogs ends the step values of the training batch that just ended:
// sent to the loggers when due (at the LogEveryNSteps cadence), else
// dropped.
func (l *logging) endStepLogs(due bool) error {
	if !due {
		_ = l.trainRes.stepValues(nil)
		return nil
	}
	row, err := l.stepRow(l.trainRes)
	if err != nil {
		return err
	}
	return l.sendRow(row, rowAt{step: l.logStep(), epoch: l.currentEpoch()})
}

// sendEvalStepRow sends the evaluation step values of the batch just run to
// the loggers, at every batch whatever Config.LogEveryNSteps, as Lightning
// does: at step idx, the loader's count of evaluation batches before this
// one in the run (Fit, Validate or Test), and without "epoch".
func (l *logging) sendEvalStepRow(res *results, idx int) error {
	row, err := l.stepRow(res)
	if err != nil {
		return err
	}
	return l.sendRow(row, rowAt{step: int64(idx), epoch: noEpoch})
}

// stepRow returns the step values of res logged since the last row, and
// publishes those of metric objects (computed only here).
func (l *logging) stepRow(res *results) (map[string]float64, error) {
	row := map[string]float64{}
	if err := res.stepValues(row); err != nil {
		return nil, err
	}
	for _, m := range res.order {
		if _, ok := row[m.stepKey]; ok && m.isObject() {
			l.publishStep(m) // a metric object's step value exists on the cadence only
		}
	}
	return row, nil
}

// publishEpochValues makes the epoch values of res visible to the epoch-end
// hooks (CallbackMetrics, the progress bar): reduced across ranks first,
// metric objects computed. table, when not nil, gives their sources to
// metric objects restored from a checkpoint (results.computeMetrics).
func (l *logging) publishEpochValues(res *results, table *metricTable) error {
	if err := l.syncResults(res); err != nil {
		return err
	}
	if err := res.computeMetrics(table); err != nil {
		return err
	}
	res.epochValues(l.callbackMetrics, nil, l.setProgressBar)
	res.ended = true
	return nil
}

// epochRow returns the epoch values of res that go to the loggers, and
// publishes them again with those the epoch-end hooks logged.
func (l *logging) epochRow(res *results) map[string]float64 {
	row := map[string]float64{}
	res.epochValues(l.callbackMetrics, row, l.setProgressBar)
	return row
}

// sendEpochLogs sends, at a training epoch's end, the step values logged
// since the last row, then the epoch values.
func (l *logging) sendEpochLogs() error { return l.sendTrainEpochRows(l.currentEpoch()) }

// sendEndedEpochLogs is sendEpochLogs for the epoch that a checkpoint
// taken in its OnTrainEpochEnd ended, in the run resumed from it: the run
// it resumes would have sent them after the checkpoint. The rows carry
// that epoch's index, as they would have: the one before the current
// (the checkpoint counted the epoch completed).
func (l *logging) sendEndedEpochLogs() error {
	if err := l.trainRes.computeMetrics(l.trainMetrics); err != nil {
		return err
	}
	return l.sendTrainEpochRows(max(l.currentEpoch()-1, 0))
}

// sendTrainEpochRows sends the training step values logged since the last
// row, then the epoch values, as rows of epoch, flushing the loggers after
// each.
func (l *logging) sendTrainEpochRows(epoch int) error {
	at := rowAt{step: l.logStep(), epoch: epoch, flush: true}
	row, err := l.stepRow(l.trainRes)
	if err != nil {
		return err
	}
	if err := l.sendRow(row, at); err != nil {
		return err
	}
	return l.sendRow(l.epochRow(l.trainRes), at)
}

// logStep is the step at which metrics are recorded, Lightning's count of
// batches that stepped (fit_loop.epoch_loop._batches_that_stepped,
// Progress.BatchesStepped): during Fit the index of the last batch that
// stepped (so a step's values and its epoch's values share a row); outside
// Fit (Validate, Test) the count as a Fit leaves it, one past that index (0
// before any Fit).
func (l *logging) logStep() int64 {
	if l.state.Fn != StageFit {
		return l.progress.BatchesStepped
	}
	return max(l.progress.BatchesStepped-1, 0)
}

// noEpoch leaves the "epoch" column out of a row (evaluation step rows, as
// in Lightning).
const noEpoch = -1

// rowAt is where a row goes in the loggers.
type rowAt struct {
	step  int64 // the loggers' step
	epoch int   // the "epoch" column; noEpoch for none
	// flush makes the loggers save after the row (Logger.Save): at a
	// training epoch's end, so that a crash loses at most the current
	// epoch's rows (the loggers also flush on their own every n steps).
	flush bool
}

// sendRow is where a row of values reaches the loggers: every logger gets
// it at at.step, with the epoch at.epoch, and the values become the latest
// logged ones (LoggedMetrics). An empty row sends nothing, but still
// flushes when at.flush.
func (l *logging) sendRow(values map[string]float64, at rowAt) error {
	defer l.profile(actLogMetrics)()
	var errs []error
	if len(values) > 0 {
		maps.Copy(l.loggedMetrics, values)
		if len(l.loggers) > 0 {
			row := maps.Clone(values)
			if at.epoch != noEpoch {
				row["epoch"] = float64(at.epoch)
			}
			for _, lg := range l.loggers {
				if err := lg.LogMetrics(row, at.step); err != nil {
					errs = append(errs, fmt.Errorf("logger %T: %w", lg, err))
				}
			}
		}
	}
	if at.flush {
		for _, lg := range l.loggers {
			if err := lg.Save(); err != nil {
				errs = append(errs, fmt.Errorf("logger %T: %w", lg, err))
			}
		}
	}
	return errors.Join(errs...)
}

// CallbackMetrics returns the latest value of every logged metric, including
// those kept out of the loggers: what callbacks such as early stopping monitor.
// As in Lightning, validation and test values appear once their epoch ends
// (their per-step values are not kept here).
func (t *Trainer) CallbackMetrics() map[string]float64 { return maps.Clone(t.logs.callbackMetrics) }

// LoggedMetrics returns the latest values sent to the loggers.
func (t *Trainer) LoggedMetrics() map[string]float64 { return maps.Clone(t.logs.loggedMetrics) }

// ProgressBarMetrics returns the latest values logged with ProgBar, under
// Lightning's names: a value logged both per step and per epoch appears as
// name_step and name_epoch.
func (t *Trainer) ProgressBarMetrics() map[string]float64 {
	return maps.Clone(t.logs.progressBarMetrics)
}

// logHyperparams records the module's and data module's hyperparameters once.
func (l *logging) logHyperparams(m Module, dm DataModule) error {
	if l.hparamsWritten || len(l.loggers) == 0 {
		return nil
	}
	params := map[string]any{}
	if h, ok := m.(HParamser); ok {
		maps.Copy(params, h.HParams())
	}
	if h, ok := dm.(HParamser); ok {
		maps.Copy(params, h.HParams())
	}
	if len(params) == 0 {
		return nil
	}
	l.hparamsWritten = true
	var errs []error
	for _, lg := range l.loggers {
		if err := lg.LogHyperparams(params); err != nil {
			errs = append(errs, fmt.Errorf("logger %T: %w", lg, err))
		}
	}
	return errors.Join(errs...)
}

// finalizeLoggers flushes the loggers at the end of a run, with the run's
// status.
func (l *logging) finalizeLoggers() error {
	status := logger.StatusSuccess
	switch l.state.Status {
	case StatusInterrupted:
		status = logger.StatusInterrupted
	case StatusFailed:
		status = logger.StatusFailed
	}
	var errs []error
	for _, lg := range l.loggers {
		if err := lg.Finalize(status); err != nil {
			errs = append(errs, fmt.Errorf("logger %T: %w", lg, err))
		}
	}
	return errors.Join(errs...)
}
