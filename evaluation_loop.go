package volt

import (
	"context"
	"fmt"
	"maps"

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
		kind := t.valKind()
		if fn == StageValidate {
			if p, ok := dm.(ValDataloaders); ok {
				loaders = p.ValDataloaders()
			}
		} else {
			kind = t.testKind()
			if p, ok := dm.(TestDataloaders); ok {
				loaders = p.TestDataloaders()
			}
		}
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
		out, err = t.runEvaluation(ctx, kind, loaders, limits)
		return err
	})
	return out, err
}

// evalKind describes one evaluation loop (validation, test, sanity check):
// its stage, its step and its hooks.
type evalKind struct {
	stage    RunningStage
	stepName string
	step     func(s *Step, b Batch)
	progress *Tracker
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

func (t *Trainer) valKind() evalKind {
	k := evalKind{stage: RunningValidate, stepName: "ValidationStep", progress: &t.progress.ValBatch,
		epochEndPoint: PointValidationEpochEnd, endPoint: PointValidationEnd, hooks: validationHooks}
	if vs, ok := t.module.(ValidationStepper); ok {
		k.step = vs.ValidationStep
	}
	return k
}

func (t *Trainer) testKind() evalKind {
	k := evalKind{stage: RunningTest, stepName: "TestStep", progress: &t.progress.TestBatch,
		epochEndPoint: PointTestEpochEnd, endPoint: PointTestEnd, hooks: testHooks}
	if ts, ok := t.module.(TestStepper); ok {
		k.step = ts.TestStep
	}
	return k
}

// sanityCheck runs a few validation batches before training, with the
// sanity-check hooks; its metrics are neither logged nor kept.
func (t *Trainer) sanityCheck(ctx context.Context, loaders []data.Loader, limits []int) error {
	t.state.Stage = RunningSanityCheck
	if err := t.emit(hookOnSanityCheckStart, hookArgs{}); err != nil {
		return err
	}
	saved := t.snapshotMetrics()
	progress := t.progress.ValBatch
	sanity := make([]int, len(loaders))
	for i := range sanity {
		sanity[i] = limits[i]
		if t.cfg.sanitySteps >= 0 && (sanity[i] < 0 || t.cfg.sanitySteps < sanity[i]) {
			sanity[i] = t.cfg.sanitySteps
		}
	}
	if _, err := t.runEvaluation(ctx, t.valKind(), loaders, sanity); err != nil {
		return err
	}
	t.progress.ValBatch = progress
	t.restoreMetrics(saved)
	t.state.Stage = RunningSanityCheck
	return t.emit(hookOnSanityCheckEnd, hookArgs{})
}

type metricsSnapshot struct{ callback, logged, progBar map[string]float64 }

func (t *Trainer) snapshotMetrics() metricsSnapshot {
	return metricsSnapshot{maps.Clone(t.logs.callbackMetrics), maps.Clone(t.logs.loggedMetrics), maps.Clone(t.logs.progressBarMetrics)}
}

func (t *Trainer) restoreMetrics(s metricsSnapshot) {
	t.logs.callbackMetrics, t.logs.loggedMetrics, t.logs.progressBarMetrics = s.callback, s.logged, s.progBar
}

// runEvaluation runs kind over loaders (at most limits[i] batches of loader
// i when limits[i] >= 0) and returns each loader's epoch metrics.
func (t *Trainer) runEvaluation(ctx context.Context, kind evalKind, loaders []data.Loader, limits []int) ([]map[string]float64, error) {
	sanity := t.state.Stage == RunningSanityCheck
	if !sanity {
		t.state.Stage = kind.stage
	}
	res := t.logs.evalRes[kind.stage]
	if res == nil {
		res = newResults()
		t.logs.evalRes[kind.stage] = res
	}
	res.reset()
	t.run.res, t.run.numLoaders, t.run.loader, t.run.batchSize = res, len(loaders), 0, 1
	t.run.evalLoaders = loaders
	kind.progress.resetCurrent()
	if err := t.emit(kind.hooks.start, hookArgs{}); err != nil {
		return nil, err
	}
	if err := t.emit(kind.hooks.epochStart, hookArgs{}); err != nil {
		return nil, err
	}
	for dl, loader := range loaders {
		t.run.loader = dl
		if err := t.evalLoader(ctx, kind, res, loader, dl, len(loaders), limits[dl]); err != nil {
			return nil, err
		}
	}
	if err := t.publishEpochValues(res, nil); err != nil {
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
	logged := t.epochRow(res)
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
		if err := t.sendRow(logged, rowAt{step: t.logStep(), epoch: t.CurrentEpoch()}); err != nil {
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

// evalLoader runs the batches of one evaluation loader.
func (t *Trainer) evalLoader(ctx context.Context, kind evalKind, res *results, loader data.Loader, dl, n, limit int) error {
	l := batchLoop{what: string(kind.stage), stepName: kind.stepName, progress: kind.progress,
		batchStart: kind.hooks.batchStart, batchEnd: kind.hooks.batchEnd}
	if t.state.Stage != RunningSanityCheck {
		// As Lightning, a batch's step values go to the loggers at the
		// count of the loader's batches before it in the run.
		seen := t.run.evalBatchesSeen[evalLoaderKey{kind.stage, dl}]
		ran := 0
		defer func() { t.run.addEvalBatchesSeen(kind.stage, dl, ran) }()
		l.afterBatch = func() error {
			ran++
			if !res.stepLogged {
				return nil
			}
			return t.sendEvalStepRow(res, seen+ran-1)
		}
	}
	return t.evalBatches(ctx, l, loader, dl, limit, func(b *data.Batch) (*StepOutput, error) {
		return t.evalSteps().evaluate(kind, res, dl, n, b)
	})
}
