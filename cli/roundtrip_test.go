package cli

import (
	"os"
	"reflect"
	"testing"

	"github.com/voltml/volt"
)

// TestRoundTrip checks that print-config's output, fed back as the only
// --config, resolves to the identical run config (every value and its type:
// a Fraction(1) stays a fraction, a nil pointer stays nil) and prints the
// same text again.
func TestRoundTrip(t *testing.T) {
	full := `seed_everything: 7
trainer:
  max_epochs: 4
  max_steps: 100
  val_check_interval: {across_epochs: 3}
  limit_train_batches: 1.0
  limit_val_batches: 2
  limit_test_batches: {fraction: 0.25}
  num_sanity_val_steps: 0
  track_grad_norm: .inf
  gradient_clip_val: 0.5
  gradient_clip_algorithm: value
  default_root_dir: "true"
  precision: 64-true
  callbacks:
    - early_stopping:
        monitor: val_loss
        strict: false
        stopping_threshold: 0.001
    - model_checkpoint:
        save_top_k: -1
        train_time_interval: 1h30m
    - gradient_accumulation_scheduler:
        scheduling: {0: 1, 4: 2}
    - stochastic_weight_averaging: {swa_lrs: [0.01, 0.02]}
    - timer:
        max_time: "00:12:00:00"
    - throughput_monitor
  loggers:
    - csv:
        name: experiment
        version: 3
    - tensorboard
model:
  lr: 1e-10
data:
  batch_size: 3
ckpt_path: some/file.ckpt
`
	tests := []struct {
		name  string
		files map[string]string
		args  []string
	}{
		{name: "defaults", args: []string{"print-config"}},
		{name: "every kind of value", files: map[string]string{"a.yaml": full}, args: []string{"print-config", "--config", "a.yaml"}},
		{name: "val_check_interval as a duration, flags", args: []string{"print-config", "--trainer.val_check_interval=90s", "--trainer.overfit_batches=0.5", "--model.lr=2"}},
		{name: "val_check_interval as a fraction of 1", args: []string{"print-config", "--trainer.val_check_interval=1.0", "--trainer.limit_predict_batches=0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first, err := fixture{files: tc.files, args: tc.args}.load(t)
			if err != nil {
				t.Fatal(err)
			}
			text := first.printed(t)
			if err := os.WriteFile("printed.yaml", []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			second, err := fixture{args: []string{"fit", "--config", "printed.yaml"}}.loadHere(t)
			if err != nil {
				t.Fatalf("the printed config does not load: %v\n%s", err, text)
			}
			if a, b := snapshot(first), snapshot(second); !reflect.DeepEqual(a, b) {
				t.Errorf("configs differ:\nfirst:  %+v\nsecond: %+v\nprinted:\n%s", a, b, text)
			}
			if again := second.printed(t); again != text {
				t.Errorf("printed differently the second time:\n%s\nfirst:\n%s", again, text)
			}
		})
	}
}

// runSnapshot is what a run config holds, comparable with DeepEqual.
type runSnapshot struct {
	Seed      uint64
	Trainer   volt.Config
	Callbacks []namedOptions
	Loggers   []namedOptions
	Model     any
	Data      any
	CkptPath  string
}

// namedOptions is a callback or logger: its name and options.
type namedOptions struct {
	Name    string
	Options any
}

// snapshot returns what l resolved to.
func snapshot(l loaded) runSnapshot {
	rc := l.inv.rc
	s := runSnapshot{Seed: rc.seed, Trainer: rc.trainer, Model: *l.model, Data: *l.data, CkptPath: rc.ckptPath}
	for _, c := range rc.callbacks {
		s.Callbacks = append(s.Callbacks, namedOptions{c.entry.name, c.options.Interface()})
	}
	for _, c := range rc.loggers {
		s.Loggers = append(s.Loggers, namedOptions{c.entry.name, c.options.Interface()})
	}
	return s
}
