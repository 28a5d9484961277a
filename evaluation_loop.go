package volt

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/voltml/volt/data"
)

// Validate runs the module's ValidationStep over the data module's validation
// loaders and returns the epoch metrics of each loader.
func (t *Trainer) Validate(ctx context.Context, m Module, dm DataModule, opts ...RunOption) ([]map[string]float64, error) {
	return t.evaluate(ctx, StageValidate, m, dm, opts)
}

// Test runs the module's TestStep over the data module's test loaders and
// returns the epoch metrics of each loader.
func (t *Trainer) Test(ctx context.Context, m Module, dm DataModule, opts ...RunOption) ([]map[string]float64, error) {
	return t.evaluate(ctx, StageTest, m, dm, opts)
}

func (t *Trainer) evaluate(ctx context.Context, fn Stage, m Module, dm DataModule, opts []RunOption) ([]map[string]float64, error) {
	var out []map[string]float64
	err := t.lifecycle(ctx, fn, m, dm, opts, func(ctx context.Context) error {
		var loaders []data.Loader
		var loop *evalLoop
		if fn == StageValidate {
			loop = t.evalLoop(RunningValidate)
			if p, ok := dm.(ValDataloaders); ok {
				loaders = p.ValDataloaders()
			}
		} else {
			loop = t.evalLoop(RunningTest)
			if p, ok := dm.(TestDataloaders); ok {
				loaders = p.TestDataloaders()
			}
		}
		kind := loop.kind
		if kind.step == nil {
			return fmt.Errorf("volt: %s needs a module with %s; %T has none", fn, kind.stepName, m)
		}
		if len(loaders) == 0 {
			return fmt.Errorf("volt: %s needs loaders: %T provides no %s loaders", fn, dm, kind.stage)
		}
		err := checkLoaders(string(kind.stage), loaders)
		if err != nil {
			return err
		}
		_, loaders = t.shardLoaders(nil, loaders)
		field := "LimitValBatches"
		limit := t.cfg.LimitValBatches
		if fn == StageTest {
			field, limit = "LimitTestBatches", t.cfg.LimitTestBatches
		}
		limits := make([]int, len(loaders))
		none := true
		for i, l := range loaders {
			if limits[i], err = limitOf(field, limit, l.NumBatches()); err != nil {
				return err
			}
			none = none && limits[i] == 0
		}
		if none {
			// Lightning's evaluation loop skips a run with no batches to
			// run (Limit*Batches: Batches(0)): no hooks, no results.
			return nil
		}
		out, err = loop.run(ctx, loaders, limits)
		return err
	})
	return out, err
}

// evalLoop is an evaluation loop, validation or test (Lightning's
// _EvaluationLoop): it runs its step over the loaders between its hooks,
// and owns its result collection and its batch progress. The trainer keeps
// one per stage for the engine's module (Trainer.evalLoop), so that the
// results outlive a run: Trainer.MetricValue reads them after Validate or
// Test, and the compiled steps keep their bindings to the metrics.
type evalLoop struct {
	t    *Trainer
	kind evalKind
	res  *results // reset when the loop starts
	// progress counts the loop's batches: the loop's tracker in the
	// trainer's Progress (ValBatch, TestBatch), which checkpoints save.
	progress *Tracker
}

// evalLoop returns the trainer's evaluation loop of stage (RunningValidate,
// which the sanity check runs too, or RunningTest), made on first use for
// the engine's module.
func (t *Trainer) evalLoop(stage RunningStage) *evalLoop {
	if l, ok := t.perModule.evalLoops[stage]; ok {
		return l
	}
	l := &evalLoop{t: t, res: newResults()}
	if stage == RunningTest {
		l.progress = &t.progress.TestBatch
		l.kind = evalKind{stage: RunningTest, stepName: "TestStep",
			epochEndPoint: PointTestEpochEnd, endPoint: PointTestEnd, hooks: testHooks}
		if ts, ok := t.module.(TestStepper); ok {
			l.kind.step = ts.TestStep
		}
	} else {
		l.progress = &t.progress.ValBatch
		l.kind = evalKind{stage: RunningValidate, stepName: "ValidationStep",
			epochEndPoint: PointValidationEpochEnd, endPoint: PointValidationEnd, hooks: validationHooks}
		if vs, ok := t.module.(ValidationStepper); ok {
			l.kind.step = vs.ValidationStep
		}
	}
	t.perModule.evalLoops[stage] = l
	return l
}

// evalKind describes what an evaluation loop runs: its stage, its step and
// its hooks.
type evalKind struct {
	stage    RunningStage
	stepName string
	step     func(s *Step, b Batch)
	// epochEndPoint and endPoint are recorded before the epoch-end and
	// end hooks.
	epochEndPoint, endPoint LoopPoint
	hooks                   evalHooks
}

// evalHooks are the hooks of one evaluation loop, in the order they run.
type evalHooks struct {
	start, epochStart, batchStart, batchEnd, epochEnd, end hookID
}

var (
	validationHooks = evalHooks{hookOnValidationStart, hookOnValidationEpochStart,
		hookOnValidationBatchStart, hookOnValidationBatchEnd, hookOnValidationEpochEnd, hookOnValidationEnd}
	testHooks = evalHooks{hookOnTestStart, hookOnTestEpochStart,
		hookOnTestBatchStart, hookOnTestBatchEnd, hookOnTestEpochEnd, hookOnTestEnd}
)

// sanityCheck runs a few batches of the (validation) loop before training,
// with the sanity-check hooks; its values are neither logged nor kept, and
// its batches are not counted.
func (l *evalLoop) sanityCheck(ctx context.Context, loaders []data.Loader, limits []int) error {
	t := l.t
	t.state.Stage = RunningSanityCheck
	if err := t.emit(hookOnSanityCheckStart, hookArgs{}); err != nil {
		return err
	}
	saved := t.logs.latest()
	progress := *l.progress
	sanity := make([]int, len(loaders))
	for i := range sanity {
		sanity[i] = limits[i]
		if t.cfg.sanitySteps >= 0 && (sanity[i] < 0 || t.cfg.sanitySteps < sanity[i]) {
			sanity[i] = t.cfg.sanitySteps
		}
	}
	if _, err := l.run(ctx, loaders, sanity); err != nil {
		return err
	}
	*l.progress = progress
	t.logs.restoreLatest(saved)
	t.state.Stage = RunningSanityCheck
	return t.emit(hookOnSanityCheckEnd, hookArgs{})
}

// latestValues is a copy of the latest values (logging).
type latestValues struct {
	callback, logged, progressBar map[string]float64
	progressBarOrder              []string
}

func (l *logging) latest() latestValues {
	return latestValues{maps.Clone(l.callbackMetrics), maps.Clone(l.loggedMetrics), maps.Clone(l.progressBarMetrics), slices.Clone(l.progressBarOrder)}
}

func (l *logging) restoreLatest(v latestValues) {
	l.callbackMetrics, l.loggedMetrics, l.progressBarMetrics = v.callback, v.logged, v.progressBar
	l.progressBarOrder = v.progressBarOrder
}

// run runs the loop over loaders (at most limits[i] batches of loader i
// when limits[i] >= 0) and returns each loader's epoch metrics.
func (l *evalLoop) run(ctx context.Context, loaders []data.Loader, limits []int) ([]map[string]float64, error) {
	t, kind, res := l.t, l.kind, l.res
	sanity := t.state.Stage == RunningSanityCheck
	if !sanity {
		t.state.Stage = kind.stage
	}
	res.reset()
	// Outside a loader's batches (start and epoch-end hooks) a value logged
	// gets no /dataloader_idx_N suffix, as in Lightning 2.2.5.
	t.run.res, t.run.numLoaders, t.run.loader, t.run.batchSize = res, len(loaders), -1, 1
	t.run.evalLoaders = loaders
	l.progress.resetCurrent()
	if err := t.emit(kind.hooks.start, hookArgs{}); err != nil {
		return nil, err
	}
	if err := t.emit(kind.hooks.epochStart, hookArgs{}); err != nil {
		return nil, err
	}
	for dl, loader := range loaders {
		t.run.loader = dl
		if err := l.runLoader(ctx, loader, dl, len(loaders), limits[dl]); err != nil {
			return nil, err
		}
	}
	t.run.loader = -1
	if err := t.logs.publishEpochValues(res, nil); err != nil {
		return nil, err
	}
	t.progress.At = kind.epochEndPoint
	if sanity {
		t.progress.At = PointSanityCheckEpochEnd
	} else if kind.stage == RunningValidate && t.state.Fn == StageFit {
		// Counted before the end hooks: a checkpoint they save resumes
		// after this validation, which it must count.
		t.progress.ValRuns++
	}
	if err := t.emit(kind.hooks.epochEnd, hookArgs{}); err != nil {
		return nil, err
	}
	logged := t.logs.epochRow(res)
	perLoader := make([]map[string]float64, len(loaders))
	for dl := range loaders {
		perLoader[dl] = map[string]float64{}
		for k, v := range logged {
			if belongsToLoader(k, dl) {
				perLoader[dl][k] = v
			}
		}
	}
	if !sanity {
		if err := t.logs.sendRow(logged, rowAt{step: t.logs.logStep(), epoch: t.CurrentEpoch()}); err != nil {
			return nil, err
		}
	}
	t.progress.At = kind.endPoint
	if sanity {
		t.progress.At = PointSanityCheckEnd
	}
	if err := t.emit(kind.hooks.end, hookArgs{}); err != nil {
		return nil, err
	}
	t.run.res = nil
	return perLoader, nil
}

// runLoader runs the batches of loader dl of n (at most limit when
// limit >= 0).
func (l *evalLoop) runLoader(ctx context.Context, loader data.Loader, dl, n, limit int) error {
	t, kind := l.t, l.kind
	bl := batchLoop{what: string(kind.stage), stepName: kind.stepName, progress: l.progress,
		batchStart: kind.hooks.batchStart, batchEnd: kind.hooks.batchEnd}
	if t.state.Stage != RunningSanityCheck {
		// As Lightning, a batch's step values go to the loggers at the
		// count of the loader's batches before it in the run.
		seen := t.run.evalBatchesSeen[evalLoaderKey{kind.stage, dl}]
		ran := 0
		defer func() { t.run.addEvalBatchesSeen(kind.stage, dl, ran) }()
		bl.afterBatch = func() error {
			ran++
			if !l.res.stepLogged {
				return nil
			}
			return t.logs.sendEvalStepRow(l.res, seen+ran-1)
		}
	}
	return t.evalBatches(ctx, bl, loader, dl, limit, func(b *data.Batch) (*StepOutput, error) {
		return t.evalSteps().evaluate(kind, l.res, dl, n, b)
	})
}
