package volt_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/profiler"
)

// hookCounts turns a recorder log into Lightning's profiler action names
// and their number of calls: "cb.OnTrainBatchStart(0)" counts for
// "[Callback]recorder.OnTrainBatchStart".
func hookCounts(log []string) map[string]int {
	prefix := map[string]string{"cb": "[Callback]recorder.", "module": "[Module]recordingModule."}
	counts := map[string]int{}
	for _, entry := range log {
		who, hook, _ := strings.Cut(entry, ".")
		if i := strings.IndexAny(hook, "(["); i >= 0 {
			hook = hook[:i]
		}
		counts[prefix[who]+hook]++
	}
	return counts
}

// TestSimpleProfilerCountsEveryHook runs each stage with the simple
// profiler and a recorder on every hook: the profile lists exactly the
// hooks that ran, each with as many calls as the recorder saw, and the
// loops' own actions with their counts.
func TestSimpleProfilerCountsEveryHook(t *testing.T) {
	var log []string
	var printed bytes.Buffer
	simple := &profiler.Simple{Out: &printed}
	dir := t.TempDir()
	m := &recordingModule{boring: &boring{}, recorder: recorder{"module", &log}}
	// The default CSV logger gives a log directory, and so the default
	// checkpointing.
	cfg := quiet(volt.Config{MaxEpochs: 2, DefaultRootDir: dir, CustomProfiler: simple,
		Callbacks: []volt.Callback{recorder{"cb", &log}}})
	cfg.DisableLoggers = false
	tr := testutil.NewTrainer(t, cfg)
	train := &data.DataLoader{Dataset: regression(32, 1), BatchSize: 16}
	val := &data.DataLoader{Dataset: regression(24, 2), BatchSize: 8}
	dm := volt.Loaders{Train: train, Val: []data.Loader{val}, Test: []data.Loader{val, val}, Predict: []data.Loader{val}}

	stages := []struct {
		stage string
		run   func() error
		// the loops' actions and their calls
		loops map[string]int
	}{
		{"fit", func() error { return tr.Fit(t.Context(), m, dm) }, map[string]int{
			"compile_training_step": 1, "run_training_epoch": 2, "run_training_batch": 4, "training_step": 4,
			// each epoch's 2 batches, and the end of the loader
			"[TrainingEpochLoop].train_dataloader_next": 2 * 3,
			// 2 sanity batches + 3 per epoch; each loop pulls one more
			// batch (the sanity check stops at the one past its limit)
			"validation_step": 2 + 2*3, "[EvaluationLoop].val_next": 3 + 2*4,
			// the default checkpoint each epoch; per epoch, the step
			// values, the epoch values and the validation's
			"save_checkpoint": 2, "log_metrics": 2 * 3,
		}},
		{"validate", func() error { _, err := tr.Validate(t.Context(), m, dm); return err }, map[string]int{
			"validation_step": 3, "[EvaluationLoop].val_next": 4, "log_metrics": 1,
		}},
		{"test", func() error { _, err := tr.Test(t.Context(), m, dm); return err }, map[string]int{
			"test_step": 6, "[EvaluationLoop].test_next": 8, "log_metrics": 1,
		}},
		{"predict", func() error { _, err := tr.Predict(t.Context(), m, dm); return err }, map[string]int{
			"predict_step": 3, "[PredictionLoop].predict_next": 4,
		}},
	}
	for _, st := range stages {
		t.Run(st.stage, func(t *testing.T) {
			log, printed = log[:0], bytes.Buffer{}
			if err := st.run(); err != nil {
				t.Fatal(err)
			}
			want := hookCounts(log)
			for action, n := range st.loops {
				want[action] = n
			}
			got := map[string]int{}
			for _, row := range simple.Report() {
				got[row.Action] = row.Calls
				if row.Total < 0 || row.Mean*time.Duration(row.Calls) > row.Total || row.Percent < 0 || row.Percent > 100 {
					t.Errorf("%s: inconsistent row %+v", row.Action, row)
				}
			}
			for action, n := range want {
				if got[action] != n {
					t.Errorf("%s: %d calls profiled, want %d", action, got[action], n)
				}
			}
			for action, n := range got {
				if _, ok := want[action]; !ok {
					t.Errorf("%s: %d calls profiled, want none", action, n)
				}
			}
			file, err := os.ReadFile(filepath.Join(tr.LogDir(), st.stage+"-profile.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(file, printed.Bytes()) || !strings.HasPrefix(string(file), strings.ToUpper(st.stage)+" Profiler Report\n") {
				t.Errorf("profile file and printed table differ or lack the header:\nfile:\n%s\nprinted:\n%s", file, printed.String())
			}
			for action := range want {
				if !strings.Contains(string(file), "|  "+action+" ") {
					t.Errorf("table has no row for %s:\n%s", action, file)
				}
			}
		})
	}
}

func TestProfilerConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		cfg  volt.Config
		want string
	}{
		{"unknown name", volt.Config{Profiler: "pytorch"},
			`Config.Profiler: unknown profiler "pytorch"; valid: "advanced", "simple", "trace" (or "" for none)`},
		{"both", volt.Config{Profiler: "simple", CustomProfiler: &profiler.Simple{}},
			`Config.Profiler ("simple") and Config.CustomProfiler are both set; use one or the other`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := volt.NewTrainer(c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("NewTrainer error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestProfilerFileErrorsFailTheRun gives the profilers a log directory
// that is a file: "advanced" cannot start, so the run fails before any
// hook; "simple" writes at the end, so the run fails after its last hook.
func TestProfilerFileErrorsFailTheRun(t *testing.T) {
	blocked := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		profiler string
		want     string
		hooks    bool // whether the run's hooks ran
	}{
		{"advanced", "volt: Config.Profiler: advanced profiler:", false},
		{"simple", "volt: simple profiler:", true},
	}
	for _, c := range cases {
		t.Run(c.profiler, func(t *testing.T) {
			var log []string
			tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1, Profiler: c.profiler, DefaultRootDir: blocked,
				Callbacks: []volt.Callback{recorder{"cb", &log}}}))
			err := tr.Fit(context.Background(), &boring{}, boringData())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Fit error = %v, want it to contain %q", err, c.want)
			}
			if ran := len(log) > 0; ran != c.hooks {
				t.Errorf("hooks ran: %v, want %v (%v)", ran, c.hooks, log)
			}
		})
	}
}

// TestSimpleProfilerSplitStep: with a gradient reducer (data parallelism)
// the step runs as two programs with the reduction between them, each
// timed inside training_step.
func TestSimpleProfilerSplitStep(t *testing.T) {
	simple := &profiler.Simple{Out: io.Discard}
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 2, CustomProfiler: simple, DefaultRootDir: t.TempDir(), NumSanityValSteps: volt.Ptr(0)}))
	reductions := 0
	volt.SetGradientReducer(tr, 1, func(g []*tensors.Tensor) ([]*tensors.Tensor, error) { reductions++; return g, nil })
	if err := tr.Fit(t.Context(), &boring{}, boringData()); err != nil {
		t.Fatal(err)
	}
	rows := map[string]profiler.Row{}
	for _, r := range simple.Report() {
		rows[r.Action] = r
	}
	steps := int(tr.GlobalStep())
	for _, action := range []string{"training_step", "gradient_step", "all_reduce", "optimizer_step"} {
		if rows[action].Calls != steps {
			t.Errorf("%s: %d calls, want %d (the steps)", action, rows[action].Calls, steps)
		}
	}
	if reductions != steps {
		t.Errorf("%d reductions, want %d", reductions, steps)
	}
	if parts := rows["gradient_step"].Total + rows["all_reduce"].Total + rows["optimizer_step"].Total; parts > rows["training_step"].Total {
		t.Errorf("the parts of the step took %v, longer than the steps (%v)", parts, rows["training_step"].Total)
	}
}

// nestingChecker is a user's profiler that checks the contract of
// profiler.Profiler: Setup before the actions, each stop called once, in the
// reverse order of the Starts, nothing open at Teardown.
type nestingChecker struct {
	t          *testing.T
	setups     []string
	open       []string
	started    int
	tornDown   int
	setUpNow   bool
	maxNesting int
}

func (c *nestingChecker) Setup(stage, dir string) error {
	c.setups = append(c.setups, stage+" in "+filepath.Base(dir))
	c.setUpNow = true
	return nil
}

func (c *nestingChecker) Start(action string) func() {
	if !c.setUpNow {
		c.t.Errorf("Start(%q) outside Setup/Teardown", action)
	}
	c.open = append(c.open, action)
	c.started++
	c.maxNesting = max(c.maxNesting, len(c.open))
	depth := len(c.open)
	return func() {
		if len(c.open) != depth || c.open[depth-1] != action {
			c.t.Errorf("stop of %q (depth %d) while %v are open", action, depth, c.open)
			return
		}
		c.open = c.open[:depth-1]
	}
}

func (c *nestingChecker) Teardown() error {
	if len(c.open) > 0 {
		c.t.Errorf("actions still open at Teardown: %v", c.open)
	}
	c.tornDown++
	c.setUpNow = false
	return nil
}

// TestCustomProfilerSeesNestedActions runs every stage, with validation,
// checkpoints, a split step and a callback saving a checkpoint from a hook,
// under a profiler that checks the nesting of the actions.
func TestCustomProfilerSeesNestedActions(t *testing.T) {
	c := &nestingChecker{t: t}
	dir := t.TempDir()
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 2, DefaultRootDir: dir, CustomProfiler: c,
		Callbacks: []volt.Callback{savesAtEpochEnd{filepath.Join(dir, "hook.ckpt")}}}))
	volt.SetGradientReducer(tr, 1, func(g []*tensors.Tensor) ([]*tensors.Tensor, error) { return g, nil })
	m, dm := &boring{}, boringData()
	if err := tr.Fit(t.Context(), m, dm); err != nil {
		t.Fatal(err)
	}
	mustValidateTestPredict(t, tr, m, dm)
	base := filepath.Base(dir)
	want := []string{"fit in " + base, "validate in " + base, "test in " + base, "predict in " + base}
	if strings.Join(c.setups, "|") != strings.Join(want, "|") || c.tornDown != len(want) {
		t.Errorf("setups %v, %d teardowns; want %v and as many teardowns", c.setups, c.tornDown, want)
	}
	// epoch > batch > training_step > gradient_step, and epoch > hook >
	// save_checkpoint.
	if c.started == 0 || c.maxNesting < 4 {
		t.Errorf("%d actions, nested %d deep; want some, at least 4 deep", c.started, c.maxNesting)
	}
}

// savesAtEpochEnd saves a checkpoint from OnTrainEpochEnd.
type savesAtEpochEnd struct{ path string }

func (s savesAtEpochEnd) OnTrainEpochEnd(t *volt.Trainer) error {
	return t.SaveCheckpoint(s.path, false)
}
