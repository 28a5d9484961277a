package callback_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// ckptCanceller cancels the run's context after training batch At (1-based,
// counted over the run) or in the validation that follows it.
type ckptCanceller struct {
	At     int64
	InVal  bool
	Cancel context.CancelFunc
}

func (c ckptCanceller) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	if !c.InVal && t.Progress().TrainBatch.Total.Processed == c.At {
		c.Cancel()
	}
	return nil
}

func (c ckptCanceller) OnValidationBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _, _ int) error {
	if c.InVal && t.State().Stage == volt.RunningValidate && t.Progress().TrainBatch.Total.Processed == c.At {
		c.Cancel()
	}
	return nil
}

func TestOnExceptionCheckpointResumes(t *testing.T) {
	const epochs = 3
	volt.SeedEverything(11)
	defer volt.SeedEverything(0)
	u := testutil.Fit(t, quiet(volt.Config{MaxEpochs: epochs}), &ckptAdam{}, ckptData())
	want := ckptWeights(t, u)

	tests := []struct {
		name  string
		at    int64
		inVal bool
	}{
		{"first batch", 1, false},
		{"mid-epoch", 5, false},
		{"last batch of an epoch", 8, false},
		{"during validation", 16, true},
		{"last batch of the run", 24, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			oe := callback.NewOnExceptionCheckpoint(callback.OnExceptionCheckpointConfig{Dirpath: dir})
			volt.SeedEverything(11)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			_, err := fit2(t, ctx, quiet(volt.Config{MaxEpochs: epochs}), &ckptAdam{}, ckptData(), oe, ckptCanceller{At: tc.at, InVal: tc.inVal, Cancel: cancel})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Fit error = %v, want context.Canceled", err)
			}
			path := filepath.Join(dir, "on_exception.ckpt")
			if oe.Path() != path {
				t.Errorf("Path %q, want %q", oe.Path(), path)
			}
			saved, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("no checkpoint after the interruption: %v", err)
			}

			// A fresh trainer, another seed: the checkpoint brings it back.
			volt.SeedEverything(999)
			r, err := fit2(t, t.Context(), quiet(volt.Config{MaxEpochs: epochs}), &ckptAdam{}, ckptData(), oe, volt.FromCheckpoint(path))
			if err != nil {
				t.Fatal(err)
			}
			if r.GlobalStep() != u.GlobalStep() {
				t.Errorf("resumed run ends at step %d, uninterrupted at %d", r.GlobalStep(), u.GlobalStep())
			}
			ckptSameWeights(t, want, ckptWeights(t, r))
			if after, _ := os.ReadFile(path); !bytes.Equal(saved, after) {
				t.Error("a Fit that succeeded rewrote the exception checkpoint")
			}
		})
	}
}

func TestOnExceptionCheckpointLeavesFileOnEarlyFailure(t *testing.T) {
	dir := t.TempDir()
	oe := callback.NewOnExceptionCheckpoint(callback.OnExceptionCheckpointConfig{Dirpath: dir, Filename: "crash"})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if _, err := fit2(t, ctx, quiet(volt.Config{MaxEpochs: 2}), &boring{}, boringData(), oe, ckptCanceller{At: 2, Cancel: cancel}); err == nil {
		t.Fatal("no error")
	}
	if oe.Path() != filepath.Join(dir, "crash.ckpt") {
		t.Fatalf("Path %q", oe.Path())
	}
	saved, err := os.ReadFile(oe.Path())
	if err != nil {
		t.Fatal(err)
	}
	// A resume that fails before OnFitStart (here: a checkpoint that does
	// not exist) leaves the file as it was.
	missing := filepath.Join(dir, "missing.ckpt")
	if _, err := fit2(t, t.Context(), quiet(volt.Config{MaxEpochs: 2}), &boring{}, boringData(), oe, volt.FromCheckpoint(missing)); err == nil || !strings.Contains(err.Error(), "missing.ckpt") {
		t.Fatalf("Fit error = %v, want one naming missing.ckpt", err)
	}
	if after, _ := os.ReadFile(oe.Path()); !bytes.Equal(saved, after) {
		t.Error("a failed resume rewrote the checkpoint it resumed from")
	}
}

func TestOnExceptionCheckpointConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  callback.OnExceptionCheckpointConfig
		want string
	}{
		{"no directory", callback.OnExceptionCheckpointConfig{}, "OnExceptionCheckpointConfig.Dirpath: required"},
		{"directory in the name", callback.OnExceptionCheckpointConfig{Dirpath: "x", Filename: "a/b.ckpt"}, `OnExceptionCheckpointConfig.Filename: a file name without directories (put those in Dirpath), got "a/b.ckpt"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := callback.NewOnExceptionCheckpoint(tc.cfg).Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// fit2 is fit with a context and run options: it trains m on dm with cfg,
// the callbacks and the options found among extra.
func fit2(t *testing.T, ctx context.Context, cfg volt.Config, m volt.Module, dm volt.DataModule, extra ...any) (*volt.Trainer, error) {
	t.Helper()
	var opts []volt.RunOption
	for _, e := range extra {
		if o, ok := e.(volt.RunOption); ok {
			opts = append(opts, o)
		} else {
			cfg.Callbacks = append(cfg.Callbacks, e)
		}
	}
	tr := testutil.NewTrainer(t, cfg)
	return tr, tr.Fit(ctx, m, dm, opts...)
}
