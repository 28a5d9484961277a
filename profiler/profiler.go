// Package profiler times what a volt run spends its time on, as Lightning's
// profilers do: each hook call, the wait for the next batch, the compiled
// step, the optimizer update of a split step, logging and checkpoint saves.
//
// Config.Profiler chooses one by name:
//
//   - "simple" ([Simple]): a table per action (calls, mean, total, share of
//     the run), printed when the run ends and written to
//     <log dir>/<stage>-profile.txt;
//   - "advanced" ([Advanced]): a CPU profile whose samples carry the label
//     action=<innermost action> (go tool pprof -tagfocus action=training_step),
//     <log dir>/<stage>-cpu.pprof, and a heap profile at the end,
//     <log dir>/<stage>-heap.pprof;
//   - "trace" ([Trace]): a Go execution trace with a task per run and a
//     region per action (go tool trace <log dir>/<stage>-trace.out), and the
//     same spans as Chrome trace events (<log dir>/<stage>-trace.json, for
//     Perfetto or chrome://tracing).
//
// In a data-parallel job every rank profiles itself; rank r > 0 writes under
// <log dir>/rank_<r>, and a named "simple" profiler prints its table on rank 0 only.
//
// Config.CustomProfiler takes any [Profiler] instead, such as a Simple writing
// its table elsewhere, or one of the user's own.
//
// The actions are named as Lightning names them:
//
//	hooks:                 [Callback]<name>.<Hook>, [Module]<type>.<Hook>, [DataModule]<type>.<Hook>
//	loops:                 run_training_epoch, run_training_batch
//	before the first batch: compile_training_step (tracing, with the trace-time hooks, and compiling)
//	waiting for a batch:   [TrainingEpochLoop].train_dataloader_next, [EvaluationLoop].val_next,
//	                       [EvaluationLoop].test_next, [PredictionLoop].predict_next
//	compiled steps:        training_step, validation_step, test_step, predict_step
//	inside a split step:   gradient_step, all_reduce, optimizer_step (data parallelism)
//	the rest:              log_metrics, save_checkpoint
package profiler

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Profiler records the actions of one run at a time. The trainer calls
// Setup when a run (Fit, Validate, Test, Predict) starts, Start and the stop
// function it returns around each action, and Teardown when the run ends,
// all from the goroutine that runs the loops (the wait for a training batch
// from the loader's iterator, which hands over synchronously). Actions nest:
// the stop functions are called in the reverse order of their Starts, except
// that a panic (a failed run's) may skip some, which Teardown must tolerate.
type Profiler interface {
	// Setup starts profiling a run of stage ("fit", "validate", "test" or
	// "predict") whose files go to dir (the run's log directory; "" is
	// the current directory).
	Setup(stage, dir string) error
	// Start marks the start of action and returns what marks its end.
	Start(action string) (stop func())
	// Teardown ends the run's profile (and any action still open) and
	// writes the profiler's files.
	Teardown() error
}

// Filer is implemented by profilers that write files: the paths the last
// Teardown wrote. The trainer logs them.
type Filer interface{ Files() []string }

// makers are the profilers Config.Profiler may name.
var makers = map[string]func() Profiler{
	"simple":   func() Profiler { return &Simple{} },
	"advanced": func() Profiler { return &Advanced{} },
	"trace":    func() Profiler { return &Trace{} },
}

// Names returns the names New accepts, sorted.
func Names() []string {
	names := make([]string, 0, len(makers))
	for n := range makers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// New returns a new profiler of the given name (see Names).
func New(name string) (Profiler, error) {
	mk, ok := makers[name]
	if !ok {
		return nil, fmt.Errorf("unknown profiler %q; valid: %s (or \"\" for none)", name, quoted(Names()))
	}
	return mk(), nil
}

// quoted joins names as "a", "b", "c".
func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// create creates the file <dir>/<stage>-<suffix> (and dir).
func create(dir, stage, suffix string) (*os.File, error) {
	if dir == "" {
		dir = "."
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.Create(filepath.Join(dir, stage+"-"+suffix))
}
