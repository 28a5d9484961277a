package volt

import (
	"fmt"
	"io"
	"iter"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/voltml/volt/data"
	"github.com/voltml/volt/profiler"
)

// The actions the loops time, besides the hooks (package profiler lists
// them all). The names are Lightning's.
const (
	actTrainEpoch      = "run_training_epoch"
	actTrainBatch      = "run_training_batch"
	actTrainNext       = "[TrainingEpochLoop].train_dataloader_next"
	actValNext         = "[EvaluationLoop].val_next"
	actTestNext        = "[EvaluationLoop].test_next"
	actPredictNext     = "[PredictionLoop].predict_next"
	actCompileTraining = "compile_training_step"
	actTrainingStep    = "training_step"
	actSyncBatchNorm   = "sync_batchnorm"
	actValidationStep  = "validation_step"
	actTestStep        = "test_step"
	actPredictStep     = "predict_step"
	actLogMetrics      = "log_metrics"
	actSaveCheckpoint  = "save_checkpoint"
)

// profilerOf returns the profiler c asks for (nil for none), or an error
// naming the field.
func profilerOf(c Config) (profiler.Profiler, error) {
	switch {
	case c.CustomProfiler != nil && c.Profiler != "":
		return nil, fmt.Errorf("Config.Profiler (%q) and Config.CustomProfiler are both set; use one or the other", c.Profiler)
	case c.CustomProfiler != nil:
		return c.CustomProfiler, nil
	case c.Profiler == "":
		return nil, nil
	}
	p, err := profiler.New(c.Profiler)
	if err != nil {
		return nil, fmt.Errorf("Config.Profiler: %w", err)
	}
	return p, nil
}

// noStop is what profile returns when no profiler is on.
func noStop() {}

// profile starts timing action when a profiler is on, and returns what ends
// it. Off, it costs a nil check and allocates nothing.
func (t *Trainer) profile(action string) (stop func()) {
	if t.run.prof == nil {
		return noStop
	}
	return t.run.prof.Start(action)
}

// profiledBatches times, as action, the wait for each batch of seq (seq
// itself when no profiler is on).
func (t *Trainer) profiledBatches(action string, seq iter.Seq2[*data.Batch, error]) iter.Seq2[*data.Batch, error] {
	if t.run.prof == nil {
		return seq
	}
	p := t.run.prof
	return func(yield func(*data.Batch, error) bool) {
		stop := p.Start(action)
		for b, err := range seq {
			stop()
			if !yield(b, err) {
				return
			}
			stop = p.Start(action)
		}
		stop()
	}
}

// startProfiler sets up the configured profiler (if any) for a run of fn,
// writing to the run's log directory. In a data-parallel job every rank
// profiles itself: rank 0 in the log directory, rank r in its rank_<r>, and
// only rank 0 prints a named "simple" profiler's table.
func (t *Trainer) startProfiler(fn Stage) error {
	t.run.prof = t.cfg.profiler
	if t.run.prof == nil {
		return nil
	}
	dir := t.LogDir()
	if r := t.ddp.group.Rank(); r > 0 {
		dir = filepath.Join(dir, fmt.Sprintf("rank_%d", r))
		if s, ok := t.run.prof.(*profiler.Simple); ok && t.cfg.CustomProfiler == nil {
			s.Out = io.Discard
		}
	}
	if err := t.run.prof.Setup(string(fn), dir); err != nil {
		t.run.prof = nil
		return fmt.Errorf("Config.Profiler: %w", err)
	}
	t.logs.prof = t.run.prof
	return nil
}

// stopProfiler ends the run's profile and says where its files are.
func (t *Trainer) stopProfiler() error {
	p := t.run.prof
	if p == nil {
		return nil
	}
	t.run.prof, t.logs.prof = nil, nil
	if err := p.Teardown(); err != nil {
		return fmt.Errorf("volt: %w", err)
	}
	if f, ok := p.(profiler.Filer); ok && len(f.Files()) > 0 {
		t.cfg.Log.Info("volt: profiler wrote " + strings.Join(f.Files(), ", "))
	}
	return nil
}

// profiledCall calls host hook id of tg, timed as its action.
func (t *Trainer) profiledCall(id hookID, tg *target, a hookArgs) error {
	defer t.run.prof.Start(tg.actionName(id))()
	return tg.call(t, a)
}

// actionName names tg's calls of hook id in profiles (hookAction), the
// first time it is asked.
func (tg *target) actionName(id hookID) string {
	if tg.action == "" {
		tg.action = hookAction(tg.kind, tg.value, hookTable[id].name)
	}
	return tg.action
}

// hookAction names a hook call of v, a target of kind, as Lightning's
// profilers do: "[Callback]<state key or name>.<Hook>",
// "[Module]<type>.<Hook>", "[DataModule]<type>.<Hook>".
func hookAction(kind targetKind, v any, hook string) string {
	prefix := "[Callback]"
	switch kind {
	case onModule:
		prefix = "[Module]"
	case onDataModule:
		prefix = "[DataModule]"
	}
	return prefix + profileName(kind, v) + "." + hook
}

// profileName names v in profiles: a callback by its state key or Name,
// else any target by its type's name without package or pointer.
func profileName(kind targetKind, v any) string {
	if kind == onCallback {
		if s, ok := v.(Stateful); ok {
			return s.StateKey()
		}
		if n, ok := v.(interface{ Name() string }); ok {
			return n.Name()
		}
	}
	typ := reflect.TypeOf(v)
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Name() != "" {
		return typ.Name()
	}
	return typ.String()
}

// nextAction and stepAction name the batch wait and the step of an
// evaluation or prediction loop.
func (l batchLoop) nextAction() string {
	switch l.stepName {
	case "TestStep":
		return actTestNext
	case "PredictStep":
		return actPredictNext
	}
	return actValNext
}

func (l batchLoop) stepAction() string {
	switch l.stepName {
	case "TestStep":
		return actTestStep
	case "PredictStep":
		return actPredictStep
	}
	return actValidationStep
}
