package volt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/optim"
)

// The loop tests in this file run Fit on a fake engine: fakeSteps stands in
// for the compiled training steps, so no graph is traced or compiled and
// what is tested is the loops' own decisions (which optimizer runs, in which
// accumulation mode, how many optimization steps a batch makes, when the
// epoch and Fit end).

// fakeSteps records every step the loops ask for.
type fakeSteps struct {
	calls       []string // "opt/mode" per step call
	prepared    int
	factor      int
	manualSteps int // optimization steps a manual step reports
	failAt      int // fail the failAt-th step call (1-based); 0: never
}

func (f *fakeSteps) prepare(*data.Batch, []programKey) error { f.prepared++; return nil }

func (f *fakeSteps) setAccumulation(k int) error { f.factor = k; return nil }

func (f *fakeSteps) step(opt int, mode engine.Accumulation, b *data.Batch) (*tensors.Tensor, int, error) {
	f.calls = append(f.calls, fmt.Sprintf("%d/%s", opt, modeName(mode)))
	if len(f.calls) == f.failAt {
		return nil, 0, errors.New("fake step failed")
	}
	return tensors.FromScalar(float32(len(f.calls))), f.manualSteps, nil
}

func modeName(m engine.Accumulation) string {
	switch m {
	case engine.ApplyAtOnce:
		return "apply"
	case engine.AccumulateOnly:
		return "acc"
	case engine.AccumulateAndApply:
		return "acc+apply"
	}
	return fmt.Sprint(int(m))
}

// untraced is a module whose TrainingStep must never be traced on the fake
// engine.
type untraced struct{ opts Optimizers }

func (untraced) TrainingStep(*Step, Batch) *graph.Node {
	panic("TrainingStep traced on the fake engine")
}

func (m untraced) ConfigureOptimizers() Optimizers {
	if m.opts == nil {
		return Optimize(optim.SGD(0.1))
	}
	return m.opts
}

// manualUntraced is untraced in manual optimization.
type manualUntraced struct{ untraced }

func (manualUntraced) AutomaticOptimization() bool { return false }

// batchRecorder records the training batches that ended, per epoch, and can
// act on one.
type batchRecorder struct {
	ended  []string // "epoch:batchIdx"
	onEnd  func(t *Trainer, batchIdx int)
	before func(t *Trainer, batchIdx int)
}

func (r *batchRecorder) OnTrainBatchStart(t *Trainer, _ *data.Batch, batchIdx int) error {
	if r.before != nil {
		r.before(t, batchIdx)
	}
	return nil
}

func (r *batchRecorder) OnTrainBatchEnd(t *Trainer, _ *StepOutput, _ *data.Batch, batchIdx int) error {
	r.ended = append(r.ended, fmt.Sprintf("%d:%d", t.CurrentEpoch(), batchIdx))
	if r.onEnd != nil {
		r.onEnd(t, batchIdx)
	}
	return nil
}

// fakeFit runs Fit of m on n examples in batches of 2 on the fake engine.
func fakeFit(t *testing.T, cfg Config, m Module, n int, fake *fakeSteps, rec *batchRecorder) (*Trainer, error) {
	t.Helper()
	return fakeFitFrom(t, cfg, m, n, fake, rec, "")
}

// fakeFitFrom is fakeFit resuming from the checkpoint at path ("": none).
func fakeFitFrom(t *testing.T, cfg Config, m Module, n int, fake *fakeSteps, rec *batchRecorder, path string) (*Trainer, error) {
	t.Helper()
	cfg.DisableLoggers, cfg.DisableCheckpointing, cfg.DisableModelSummary = true, true, true
	cfg.Log = slog.New(slog.DiscardHandler)
	cfg.Callbacks = append(cfg.Callbacks, rec)
	tr, err := NewTrainer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr.cfg.fakeSteps = fake
	examples := make(data.Slice, n)
	for i := range examples {
		examples[i] = data.Example{Inputs: []data.Field{{Value: []float32{float32(i)}}}, Labels: []data.Field{{Value: []float32{1}}}}
	}
	train := &data.DataLoader{Dataset: examples, BatchSize: 2}
	var opts []RunOption
	if path != "" {
		opts = append(opts, FromCheckpoint(path))
	}
	return tr, tr.Fit(context.Background(), m, Loaders{Train: train}, opts...)
}

func TestLoopsOnFakeEngine(t *testing.T) {
	apply, acc, accApply := "0/apply", "0/acc", "0/acc+apply"
	tests := []struct {
		name   string
		cfg    Config
		module Module
		n      int // examples (batches of 2)
		rec    batchRecorder
		fake   fakeSteps

		wantCalls []string
		wantEnded []string // nil: not checked
		wantSteps int64
		wantErr   string
	}{{
		name: "one optimizer, two epochs", cfg: Config{MaxEpochs: 2}, module: untraced{}, n: 6,
		wantCalls: []string{apply, apply, apply, apply, apply, apply},
		wantEnded: []string{"0:0", "0:1", "0:2", "1:0", "1:1", "1:2"}, wantSteps: 6,
	}, {
		name: "accumulation 3 over 7 batches: the last, partial window steps", cfg: Config{MaxEpochs: 1, AccumulateGradBatches: 3},
		module: untraced{}, n: 14,
		wantCalls: []string{acc, acc, accApply, acc, acc, accApply, accApply}, wantSteps: 3,
	}, {
		name: "MaxSteps counts optimization steps, not batches", cfg: Config{MaxEpochs: 5, MaxSteps: 3, AccumulateGradBatches: 2},
		module: untraced{}, n: 20,
		wantCalls: []string{acc, accApply, acc, accApply, acc, accApply}, wantSteps: 3,
	}, {
		name: "a stop inside an accumulation window waits for its end", cfg: Config{MaxEpochs: 3, AccumulateGradBatches: 3},
		module: untraced{}, n: 20,
		rec:       batchRecorder{onEnd: func(t *Trainer, i int) { t.Stop("test") }},
		wantCalls: []string{acc, acc, accApply}, wantEnded: []string{"0:0", "0:1", "0:2"}, wantSteps: 1,
	}, {
		// 5 batches an epoch: MinSteps 7 ends training in the second epoch.
		name: "a stop waits for MinSteps", cfg: Config{MaxEpochs: 3, MinSteps: 7},
		module: untraced{}, n: 10,
		rec:       batchRecorder{onEnd: func(t *Trainer, i int) { t.Stop("test") }},
		wantCalls: []string{apply, apply, apply, apply, apply, apply, apply}, wantSteps: 7,
	}, {
		// Lightning's min_epochs becomes 1 with min_steps alone.
		name: "a stop waits for MinSteps and the first epoch", cfg: Config{MaxEpochs: 3, MinSteps: 2},
		module: untraced{}, n: 10,
		rec:       batchRecorder{onEnd: func(t *Trainer, i int) { t.Stop("test") }},
		wantCalls: []string{apply, apply, apply, apply, apply}, wantSteps: 5,
	}, {
		name: "alternating optimizers follow their frequencies", cfg: Config{MaxEpochs: 1},
		module: untraced{opts: Optimizers{{Optimizer: optim.SGD(0.1), Frequency: 2}, {Optimizer: optim.SGD(0.1)}}}, n: 12,
		wantCalls: []string{apply, apply, "1/apply", apply, apply, "1/apply"}, wantSteps: 6,
	}, {
		name: "both optimizers run on every batch without frequencies", cfg: Config{MaxEpochs: 1},
		module: untraced{opts: Optimizers{{Optimizer: optim.SGD(0.1)}, {Optimizer: optim.SGD(0.1)}}}, n: 4,
		wantCalls: []string{apply, "1/apply", apply, "1/apply"}, wantSteps: 2,
	}, {
		name: "manual optimization counts the module's optimizer steps", cfg: Config{MaxEpochs: 1},
		module: manualUntraced{}, n: 6, fake: fakeSteps{manualSteps: 2},
		wantCalls: []string{"-1/apply", "-1/apply", "-1/apply"}, wantSteps: 6,
	}, {
		name: "SkipRestOfEpoch ends the epoch before the batch", cfg: Config{MaxEpochs: 2},
		module: untraced{}, n: 8,
		rec: batchRecorder{before: func(t *Trainer, i int) {
			if i == 2 {
				t.SkipRestOfEpoch()
			}
		}},
		wantCalls: []string{apply, apply, apply, apply}, wantEnded: []string{"0:0", "0:1", "1:0", "1:1"}, wantSteps: 4,
	}, {
		name: "a failing step names the step, epoch and batch", cfg: Config{MaxEpochs: 1},
		module: untraced{}, n: 8, fake: fakeSteps{failAt: 3},
		wantCalls: []string{apply, apply, apply}, wantSteps: 2, wantErr: "batch 2",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, rec := tt.fake, tt.rec
			tr, err := fakeFit(t, tt.cfg, tt.module, tt.n, &fake, &rec)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Fit: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Fit error = %v, want one containing %q", err, tt.wantErr)
			}
			if !slices.Equal(fake.calls, tt.wantCalls) {
				t.Errorf("steps run:\n got  %v\n want %v", fake.calls, tt.wantCalls)
			}
			if tt.wantEnded != nil && !slices.Equal(rec.ended, tt.wantEnded) {
				t.Errorf("batches ended:\n got  %v\n want %v", rec.ended, tt.wantEnded)
			}
			if got := tr.GlobalStep(); got != tt.wantSteps {
				t.Errorf("GlobalStep() = %d, want %d", got, tt.wantSteps)
			}
			if fake.prepared != 1 {
				t.Errorf("prepare ran %d times, want once", fake.prepared)
			}
		})
	}
}

// A checkpoint saved mid-epoch (after batch 3 of epoch 0, at an
// accumulation boundary) resumes in a new trainer with the next batch, and
// the resumed run ends with the counters and steps of the uninterrupted run.
func TestResumeCountersOnFakeEngine(t *testing.T) {
	cfg := Config{MaxEpochs: 2, AccumulateGradBatches: 2}
	path := t.TempDir() + "/mid.ckpt"
	straight := &fakeSteps{}
	var saveErr error
	saveMid := &batchRecorder{onEnd: func(tr *Trainer, i int) {
		if tr.CurrentEpoch() == 0 && i == 3 {
			saveErr = tr.SaveCheckpoint(path, false)
		}
	}}
	full, err := fakeFit(t, cfg, untraced{}, 10, straight, saveMid)
	if err != nil || saveErr != nil {
		t.Fatal(err, saveErr)
	}

	resumedSteps, rec := &fakeSteps{}, &batchRecorder{}
	resumed, err := fakeFitFrom(t, cfg, untraced{}, 10, resumedSteps, rec, path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"0:4", "1:0", "1:1", "1:2", "1:3", "1:4"}; !slices.Equal(rec.ended, want) {
		t.Errorf("resumed run ended batches %v, want %v", rec.ended, want)
	}
	if want := straight.calls[4:]; !slices.Equal(resumedSteps.calls, want) {
		t.Errorf("resumed run's steps %v, want the rest of one run's %v", resumedSteps.calls, want)
	}
	a, b := full.Progress(), resumed.Progress()
	if a.OptimizerSteps != b.OptimizerSteps || a.Epoch != b.Epoch || a.TrainBatch != b.TrainBatch {
		t.Errorf("resumed progress %+v, want that of one run %+v", b, a)
	}
}

// FakeEval is a fake engine for the validation, test and predict steps: it
// compiles nothing, records each step it is asked for and logs the values
// Log returns, as a module's step would. UseFakeEngine installs it; tests
// outside the package use it with the callbacks.
type FakeEval struct {
	// Log returns the values the step of loader dl logs for a batch (nil:
	// none).
	Log   func(t *Trainer, dl int) map[string]float64
	Calls []string // "stage/dl/batch size" per step
	tr    *Trainer
}

func (f *FakeEval) evaluate(kind evalKind, _ *results, dl, _ int, b *data.Batch) (*StepOutput, error) {
	f.Calls = append(f.Calls, fmt.Sprintf("%s/%d/%d", kind.stage, dl, b.Size))
	if f.Log != nil {
		for name, v := range f.Log(f.tr, dl) {
			f.tr.Log(name, v)
		}
	}
	return &StepOutput{stage: kind.stage}, nil
}

func (f *FakeEval) predict(_ PredictStepper, dl int, b *data.Batch) (*StepOutput, error) {
	f.Calls = append(f.Calls, fmt.Sprintf("%s/%d/%d", RunningPredict, dl, b.Size))
	return &StepOutput{stage: RunningPredict, Prediction: tensors.FromScalar(float32(len(f.Calls)))}, nil
}

// UseFakeEngine makes t run its training steps on a fake that records
// nothing and its evaluation and prediction steps on eval.
func UseFakeEngine(t *Trainer, eval *FakeEval) {
	t.cfg.fakeSteps = &fakeSteps{}
	eval.tr = t
	t.cfg.fakeEval = eval
}
