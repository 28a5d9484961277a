package volt_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/optim"
)

func TestDefaultCheckpointKeepsTheLatestEpoch(t *testing.T) {
	root := t.TempDir()
	cfg := quiet(volt.Config{MaxEpochs: 3, DefaultRootDir: root})
	cfg.DisableLoggers = false
	tr := testutil.Fit(t, cfg, &boring{}, boringData())
	files, _ := filepath.Glob(filepath.Join(root, "volt_logs", "version_0", "checkpoints", "*.ckpt"))
	if len(files) != 1 || filepath.Base(files[0]) != "epoch=2-step=12.ckpt" {
		t.Fatalf("checkpoints %v, want only epoch=2-step=12.ckpt", files)
	}
	if tr.LastCheckpoint() != files[0] {
		t.Errorf("LastCheckpoint %q, want %q", tr.LastCheckpoint(), files[0])
	}
	// Resuming from it with more epochs continues where it stopped.
	cfg.MaxEpochs, cfg.DefaultRootDir = 4, t.TempDir()
	r := testutil.NewTrainer(t, cfg)
	if err := r.Fit(t.Context(), &boring{}, boringData(), volt.FromCheckpoint(files[0])); err != nil {
		t.Fatal(err)
	}
	if r.GlobalStep() != 16 {
		t.Errorf("resumed run ends at step %d, want 16", r.GlobalStep())
	}
}

// valueClipper clips its gradients by value itself, whatever is configured.
type valueClipper struct {
	boring
	calls []string
}

func (m *valueClipper) ConfigureGradientClipping(s *volt.Step, opt int, grads []volt.Gradient, clipVal float64, algo volt.ClipAlgorithm) {
	m.calls = append(m.calls, string(algo))
	volt.ClipGradients(grads, 1e-3, volt.ClipValue)
}

func TestGradientClipperOverridesClipping(t *testing.T) {
	m := &valueClipper{boring: boring{LR: 1}}
	before := fitBoring(t, volt.Config{MaxSteps: 1, Precision: "64-true", DisableCheckpointing: true}, loaderOf(regression(16, 4), 16), &boring{LR: 1e-300})
	after := fitBoring(t, volt.Config{MaxSteps: 1, Precision: "64-true", GradientClipVal: 10}, loaderOf(regression(16, 4), 16), m)
	if !slices.Equal(m.calls, []string{"norm"}) {
		t.Errorf("ConfigureGradientClipping calls %v, want one with the configured algorithm", m.calls)
	}
	w0, w1 := floats(t, before, "/dense")["/dense/dense/weights"], floats(t, after, "/dense")["/dense/dense/weights"]
	for i := range w0 {
		if d := math.Abs(w1[i] - w0[i]); d > 1e-3*(1+1e-9) {
			t.Errorf("weight %d moved %g: the module's value clipping was not used", i, d)
		}
	}
}

// traceCounter counts how often its training step is traced.
type traceCounter struct {
	scheduled
	traces int
}

func (m *traceCounter) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	m.traces++
	return m.scheduled.TrainingStep(s, b)
}

func TestChangingTheLearningRateNeverRetraces(t *testing.T) {
	sched, _ := optim.NewExponentialLR(0.5)
	m := &traceCounter{scheduled: scheduled{setup: volt.OptimizerSetup{Optimizer: optim.SGD(0.1), Scheduler: sched, Interval: volt.IntervalStep}}}
	rec := &lrRecorder{}
	fitBoring(t, volt.Config{MaxEpochs: 3, Callbacks: []volt.Callback{rec}}, loaderOf(regression(16, 1), 4), m)
	if m.traces != 1 {
		t.Errorf("the training step was traced %d times over 12 learning rates, want 1", m.traces)
	}
	if rec.lrs[0] == rec.lrs[11] {
		t.Error("the learning rate did not change")
	}
}

// statefulData is a data module with state and hyperparameters.
type statefulData struct {
	volt.Loaders
	Counter int
}

func (d *statefulData) State() ([]byte, error)       { return json.Marshal(d.Counter) }
func (d *statefulData) LoadState(b []byte) error     { return json.Unmarshal(b, &d.Counter) }
func (d *statefulData) HParams() map[string]any      { return map[string]any{"batch": 4} }
func (d *statefulData) Setup(stage volt.Stage) error { d.Counter++; return nil }

func TestDataModuleStateAndHParams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dm.ckpt")
	dm := &statefulData{Loaders: boringData(), Counter: 41}
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1}))
	if err := tr.Fit(t.Context(), &boring{}, dm); err != nil {
		t.Fatal(err)
	}
	if err := tr.SaveCheckpoint(path, false); err != nil {
		t.Fatal(err)
	}
	fresh := &statefulData{Loaders: boringData()}
	r := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 2}))
	if err := r.Fit(t.Context(), &boring{}, fresh, volt.FromCheckpoint(path)); err != nil {
		t.Fatal(err)
	}
	// Setup ran (1), then the checkpoint's 42 was restored.
	if fresh.Counter != 42 {
		t.Errorf("data module state %d after resume, want 42", fresh.Counter)
	}
	raw, _ := os.ReadFile(path)
	if !contains(string(raw), `\"datamodule_hparams\":{\"batch\":4}`) {
		t.Error("the data module's hyperparameters are not in the checkpoint")
	}
}

// TestBatchCountsOutsideRuns: NumTrainingBatches is -1 and NumEvalBatches
// empty once Fit returns, as documented (they were the last run's).
func TestBatchCountsOutsideRuns(t *testing.T) {
	tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 1}), &boring{}, boringData())
	if n := tr.NumTrainingBatches(); n != -1 {
		t.Errorf("NumTrainingBatches after Fit = %d, want -1", n)
	}
	if n := tr.NumEvalBatches(); len(n) != 0 {
		t.Errorf("NumEvalBatches after Fit = %v, want none", n)
	}
}
