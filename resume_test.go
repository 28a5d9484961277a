package volt_test

import (
	"bytes"
	"log/slog"
	"maps"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/logger"
	"github.com/voltml/volt/optim"
)

// adamBoring is the boring model trained with Adam and a step scheduler, so
// optimizer and scheduler state matter.
type adamBoring struct{ boring }

func (adamBoring) ConfigureOptimizers() volt.Optimizers {
	sched := optim.NewStepLR(3, 0.7)
	return volt.Optimizers{{Optimizer: optim.Adam(0.01), Scheduler: sched, Interval: volt.IntervalStep}}
}

// saver writes a checkpoint at one moment of the run: after training batch
// number atBatch (1-based, counted over the run), at the end of the
// validation after it, or at the end of its epoch; or at the end of the
// sanity check or of training.
type saver struct {
	path    string
	atBatch int64
	when    string // "batch", "validation", "epoch", "sanity check", "train end"
	mem     *memLogger
	mark    int   // rows logged before the save
	step    int64 // global step at the save
	saved   bool
}

func (s *saver) save(t *volt.Trainer, when string) error {
	if s.saved || when != s.when || t.Progress().TrainBatch.Total.Processed != s.atBatch {
		return nil
	}
	s.saved, s.mark, s.step = true, len(s.mem.rows), t.GlobalStep()
	return t.SaveCheckpoint(s.path, false)
}

func (s *saver) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	return s.save(t, "batch")
}
func (s *saver) OnValidationEnd(t *volt.Trainer) error  { return s.save(t, "validation") }
func (s *saver) OnTrainEpochEnd(t *volt.Trainer) error  { return s.save(t, "epoch") }
func (s *saver) OnSanityCheckEnd(t *volt.Trainer) error { return s.save(t, "sanity check") }
func (s *saver) OnTrainEnd(t *volt.Trainer) error       { return s.save(t, "train end") }

func resumeData() volt.Loaders {
	return volt.Loaders{
		Train: &data.DataLoader{Dataset: regression(64, 1), BatchSize: 8, Shuffle: true},
		Val:   []data.Loader{&data.DataLoader{Dataset: regression(16, 2), BatchSize: 8}},
	}
}

func TestResumeParity(t *testing.T) {
	tests := []struct {
		name       string
		accumulate int
		atBatch    int64
		when       string
		val        volt.ValInterval
	}{
		{"mid-epoch", 1, 5, "batch", nil},
		{"first batch", 1, 1, "batch", nil},
		{"accumulation, inside the window", 3, 4, "batch", nil},
		{"accumulation, at the partial window's end", 3, 8, "batch", nil},
		{"last batch of an epoch", 1, 16, "batch", nil},
		{"after validation", 1, 8, "validation", nil},
		{"epoch end", 1, 16, "epoch", nil},
		{"last epoch end", 1, 24, "epoch", nil},
		{"after the sanity check", 1, 0, "sanity check", nil},
		{"after training", 1, 24, "train end", nil},
		{"validation every half epoch, after the mid-epoch validation", 1, 12, "validation", volt.Fraction(0.5)},
		{"validation every half epoch, before the mid-epoch validation", 1, 12, "batch", volt.Fraction(0.5)},
		{"validation every half epoch with accumulation", 3, 10, "batch", volt.Fraction(0.5)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := quiet(volt.Config{MaxEpochs: 3, AccumulateGradBatches: tc.accumulate, LogEveryNSteps: 2, ValCheckInterval: tc.val})
			// The uninterrupted run saves a checkpoint on the way; a fresh
			// trainer resumes from it.
			p := fitAndResume(t, cfg, func() volt.Module { return &adamBoring{} }, tc.atBatch, tc.when)
			u, r, full, resumed, sv := p.u, p.r, p.full, p.resumed, p.sv
			if r.GlobalStep() != u.GlobalStep() || r.CurrentEpoch() != u.CurrentEpoch() {
				t.Errorf("resumed run ends at step %d epoch %d, uninterrupted at %d, %d", r.GlobalStep(), r.CurrentEpoch(), u.GlobalStep(), u.CurrentEpoch())
			}
			wu, wr := weights(t, u), weights(t, r)
			if !equalWeights(wu, wr) {
				for k := range wu {
					if string(wu[k]) != string(wr[k]) {
						t.Errorf("variable %s differs after resume", k)
					}
				}
			}
			if !maps.Equal(u.LoggedMetrics(), r.LoggedMetrics()) {
				t.Errorf("logged metrics differ:\n uninterrupted %v\n resumed       %v", u.LoggedMetrics(), r.LoggedMetrics())
			}
			// Rows after the save point: the uninterrupted run may log the
			// saved batch's step values right after the hook; the resumed
			// run starts after that.
			rest := full.rows[sv.mark:]
			steps := full.steps[sv.mark:]
			if len(rest) > 0 && steps[0] == sv.step-1 && len(rest) > len(resumed.rows) {
				rest, steps = rest[1:], steps[1:]
			}
			if len(rest)+len(resumed.rows) > 0 && (!reflect.DeepEqual(rest, resumed.rows) || !reflect.DeepEqual(steps, resumed.steps)) {
				t.Errorf("rows differ after the save point:\n uninterrupted %v %v\n resumed       %v %v", steps, rest, resumed.steps, resumed.rows)
			}
		})
	}
}

func TestResumeErrors(t *testing.T) {
	dir := t.TempDir()
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1}))
	trained := &boring{}
	if err := tr.Fit(t.Context(), trained, boringData()); err != nil {
		t.Fatal(err)
	}
	full, weightsOnly := filepath.Join(dir, "full.ckpt"), filepath.Join(dir, "weights.ckpt")
	if err := tr.SaveCheckpoint(full, false); err != nil {
		t.Fatal(err)
	}
	if err := tr.SaveCheckpoint(weightsOnly, true); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		module volt.Module
		opts   []volt.RunOption
		want   string
	}{
		{"missing file", &boring{}, []volt.RunOption{volt.FromCheckpoint(filepath.Join(dir, "nope.ckpt"))}, "nope.ckpt: no such file"},
		{"weights only", &boring{}, []volt.RunOption{volt.FromCheckpoint(weightsOnly)}, "holds weights only; Fit cannot resume from it"},
		{"wrong model", &wideBoring{}, []volt.RunOption{volt.FromCheckpoint(full)}, "shape"},
		{"extra variable", &twoLayer{}, []volt.RunOption{volt.FromCheckpoint(full)}, `missing variables ["/extra/dense/biases" "/extra/dense/weights"]`},
		{"last before any save", &boring{}, []volt.RunOption{volt.FromCheckpoint("last")}, "has not saved a checkpoint yet"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 2}))
			err := r.Fit(t.Context(), tc.module, boringData(), tc.opts...)
			if err == nil || !contains(err.Error(), tc.want) {
				t.Fatalf("Fit error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	t.Run("non-strict loads what fits", func(t *testing.T) {
		testutil.Fit(t, quiet(volt.Config{MaxEpochs: 2}), &twoLayer{}, boringData(), volt.FromCheckpoint(full), volt.NonStrict())
	})
	t.Run("weights for testing", func(t *testing.T) {
		r := testutil.NewTrainer(t, quiet(volt.Config{}))
		res, err := r.Test(t.Context(), &boring{}, boringData(), volt.FromCheckpoint(weightsOnly))
		if err != nil {
			t.Fatal(err)
		}
		// The trained weights give exactly the trained module's test loss,
		// which differs from an untrained model's.
		want, err := tr.Test(t.Context(), trained, boringData())
		if err != nil {
			t.Fatal(err)
		}
		untrained := testutil.NewTrainer(t, quiet(volt.Config{}))
		fresh, err := untrained.Test(t.Context(), &boring{}, boringData())
		if err != nil {
			t.Fatal(err)
		}
		if res[0]["test_loss"] != want[0]["test_loss"] || res[0]["test_loss"] == fresh[0]["test_loss"] {
			t.Errorf("test_loss from the weights file %v, trained %v, untrained %v", res[0]["test_loss"], want[0]["test_loss"], fresh[0]["test_loss"])
		}
	})
}

// wideBoring has the boring model's variable names with other shapes.
type wideBoring struct{ boring }

func (m *wideBoring) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	out := layers.DenseWithBias(s.Scope().In("dense"), b.Input(0), 2)
	return graph.ReduceAllMean(graph.Square(graph.Sub(out, b.Label(0))))
}

// twoLayer has the boring model's variables plus an extra layer.
type twoLayer struct{ boring }

func (m *twoLayer) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	extra := layers.DenseWithBias(s.Scope().In("extra"), b.Input(0), 1)
	return graph.Add(m.boring.TrainingStep(s, b), graph.ReduceAllMean(graph.MulScalar(extra, 0)))
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestLastCheckpointInANewProcess: FromCheckpoint("last") in a new trainer
// (a restart after a crash) finds the newest checkpoint that the earlier
// runs of the same configuration wrote, not only its own.
func TestLastCheckpointInANewProcess(t *testing.T) {
	root := t.TempDir()
	cfg := func(epochs int) volt.Config {
		c := quiet(volt.Config{MaxEpochs: epochs, DefaultRootDir: root})
		c.DisableLoggers = false // the default CSV logger gives the run directory
		return c
	}
	first := testutil.Fit(t, cfg(2), &boring{}, boringData())
	var said bytes.Buffer
	secondCfg := cfg(3)
	secondCfg.Log = slog.New(slog.NewTextHandler(&said, nil))
	second := testutil.Fit(t, secondCfg, &boring{}, boringData(), volt.FromCheckpoint("last"))
	if second.LogDir() != first.LogDir() {
		t.Errorf("the resumed run logs to %s, want the run it resumes, %s", second.LogDir(), first.LogDir())
	}
	if want := "the logs continue those of the run it resumes in " + first.LogDir(); !strings.Contains(said.String(), want) {
		t.Errorf("the resumed run did not say where its rows go (%q):\n%s", want, said.String())
	}
	if second.GlobalStep() != 12 || second.CurrentEpoch() != 3 {
		t.Errorf("resumed run ended at epoch %d, step %d; want 3 and 12 (2 epochs restored, 1 trained)", second.CurrentEpoch(), second.GlobalStep())
	}
	fresh := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1, DefaultRootDir: t.TempDir()}))
	err := fresh.Fit(t.Context(), &boring{}, boringData(), volt.FromCheckpoint("last"))
	if err == nil || !strings.Contains(err.Error(), "no checkpoint directory is configured") {
		t.Errorf("Fit from \"last\" with nothing saved = %v, want an error saying where volt looked", err)
	}
}

// resumedPair is an uninterrupted Fit that saved a checkpoint on the way
// (where its saver says) and a new trainer's Fit resumed from that file.
type resumedPair struct {
	u, r          *volt.Trainer
	full, resumed *memLogger // the rows each run logged
	sv            *saver
}

// fitAndResume runs cfg (loggers on) to the end with a saver at atBatch and
// when, then resumes a new trainer, seeded otherwise (the checkpoint must
// bring the seed back), from the saved file; each run gets a new module.
func fitAndResume(t *testing.T, cfg volt.Config, newModule func() volt.Module, atBatch int64, when string) resumedPair {
	t.Helper()
	cfg.DisableLoggers = false
	path := filepath.Join(t.TempDir(), "resume.ckpt")
	volt.SeedEverything(11)
	t.Cleanup(func() { volt.SeedEverything(0) })
	p := resumedPair{full: &memLogger{}, resumed: &memLogger{}}
	p.sv = &saver{path: path, atBatch: atBatch, when: when, mem: p.full}
	cfg.Loggers, cfg.Callbacks = []logger.Logger{p.full}, []volt.Callback{p.sv}
	p.u = testutil.Fit(t, cfg, newModule(), resumeData())
	if !p.sv.saved {
		t.Fatal("the checkpoint was not saved")
	}
	volt.SeedEverything(999)
	cfg.Loggers, cfg.Callbacks = []logger.Logger{p.resumed}, nil
	p.r = testutil.Fit(t, cfg, newModule(), resumeData(), volt.FromCheckpoint(path))
	return p
}
