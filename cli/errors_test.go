package cli

import (
	"errors"
	"strings"
	"testing"
)

// TestErrors checks each kind of mistake gives a message naming the key,
// where it was set (file:line, flag or environment variable), what is
// wrong, and the nearest valid key or name when one is unknown.
func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		file string // written to a.yaml, passed with --config a.yaml
		args []string
		env  map[string]string
		want []string // the lines of the error, in order
	}{
		{name: "unknown key",
			file: "trainer:\n  max_epoch: 3\n",
			want: []string{"a.yaml:2: trainer.max_epoch: unknown key; did you mean trainer.max_epochs?"}},
		{name: "key in the wrong section",
			file: "max_epochs: 3\n",
			want: []string{"a.yaml:1: max_epochs: unknown key; did you mean trainer.max_epochs?"}},
		{name: "unknown section",
			file: "trainr:\n  max_epochs: 3\n",
			want: []string{"a.yaml:1: trainr: unknown key; did you mean trainer?"}},
		{name: "unknown module field",
			file: "model:\n  learning_rate: 0.1\n",
			want: []string{"a.yaml:2: model.learning_rate: unknown key; did you mean model.lr?"}},
		{name: "string for an integer",
			file: "trainer:\n  max_epochs: three\n",
			want: []string{`a.yaml:2: trainer.max_epochs: want an integer, got "three"`}},
		{name: "float for an integer",
			file: "trainer:\n  max_epochs: 2.5\n",
			want: []string{`a.yaml:2: trainer.max_epochs: want an integer, got "2.5"`}},
		{name: "null for an integer",
			file: "trainer:\n  max_epochs:\n",
			want: []string{`a.yaml:2: trainer.max_epochs: want an integer, got null`}},
		{name: "negative seed",
			file: "seed_everything: -1\n",
			want: []string{`a.yaml:1: seed_everything: want an integer >= 0, got "-1"`}},
		{name: "list for a number",
			file: "model:\n  lr: [1, 2]\n",
			want: []string{"a.yaml:2: model.lr: want a number, got a list"}},
		{name: "section that is not a mapping",
			file: "trainer: 3\n",
			want: []string{`a.yaml:1: trainer: section trainer must be a mapping of keys, got "3"`}},
		{name: "key set twice in one file",
			file: "trainer:\n  max_epochs: 3\n  max_epochs: 4\n",
			want: []string{"a.yaml:3: trainer.max_epochs: set twice (first at a.yaml:2)"}},
		{name: "YAML syntax",
			file: "trainer:\n  max_epochs: 3\n   bad: [\n",
			want: []string{"a.yaml:3: mapping values are not allowed in this context"}},
		{name: "fraction out of range (volt's own check)",
			file: "trainer:\n  limit_train_batches: 1.5\n",
			want: []string{"a.yaml:2: trainer.limit_train_batches: volt.Fraction must be in [0, 1], got 1.5"}},
		{name: "unknown precision",
			file: "trainer:\n  precision: 8-true\n",
			want: []string{`a.yaml:2: trainer.precision: unknown precision "8-true"; valid: "32-true", "64-true", "bf16-mixed", "bf16-true", "16-mixed", "16-true"`}},
		{name: "unknown interval form",
			file: "trainer:\n  val_check_interval: {acros_epochs: 3}\n",
			want: []string{`a.yaml:2: trainer.val_check_interval: unknown form "acros_epochs"; want an integer (batches), a float (a fraction of the epoch), a duration such as "10m", {across_epochs: n}, or null (after each epoch); did you mean across_epochs?`}},
		{name: "duration for a batch limit",
			file: "trainer:\n  limit_val_batches: 10m\n",
			want: []string{`a.yaml:2: trainer.limit_val_batches: want an integer (a number of batches), a float (a fraction of the epoch), {batches: n}, {fraction: f} or null (all); got "10m"`}},
		{name: "fields at odds, each located",
			file: "trainer:\n  min_epochs: 5\n", args: []string{"--trainer.max_epochs=3"},
			want: []string{"trainer.min_epochs (a.yaml:2), trainer.max_epochs (flag --trainer.max_epochs): Config.MinEpochs (5) is larger than Config.MaxEpochs (3)"}},
		{name: "unknown callback",
			file: "trainer:\n  callbacks:\n    - early_stoping:\n        monitor: val_loss\n",
			want: []string{`a.yaml:3: trainer.callbacks[0]: unknown callback "early_stoping"; valid: [backbone_finetuning device_stats_monitor early_stopping ema_weight_averaging finetuning gradient_accumulation_scheduler learning_rate_monitor model_checkpoint model_summary on_exception_checkpoint prediction_writer progress_bar stochastic_weight_averaging throughput_monitor timer]; did you mean early_stopping?`}},
		{name: "unknown callback option",
			file: "trainer:\n  callbacks:\n    - early_stopping:\n        monitr: val_loss\n",
			want: []string{"a.yaml:4: trainer.callbacks[0].early_stopping.monitr: unknown key; did you mean trainer.callbacks[0].early_stopping.monitor?"}},
		{name: "bad callback option value",
			file: "trainer:\n  callbacks:\n    - timer: {max_time: soon}\n",
			want: []string{`a.yaml:3: trainer.callbacks[0].timer.max_time: want a duration such as "90s", "1h30m" or "00:12:00:00", got "soon"`}},
		{name: "options without a callback name",
			file: "trainer:\n  callbacks:\n    - monitor: val_loss\n      patience: 3\n",
			want: []string{"a.yaml:3: trainer.callbacks[0]: want a callback name, or one name mapped to its options ({early_stopping: {monitor: val_loss}}), got a mapping"}},
		{name: "callback the constructor rejects",
			file: "trainer:\n  callbacks:\n    - learning_rate_monitor:\n        logging_interval: hourly\n",
			want: []string{`a.yaml:4: trainer.callbacks[0] (learning_rate_monitor): callback.NewLearningRateMonitor: LearningRateMonitorConfig.LoggingInterval: unknown "hourly"; valid: "step", "epoch"`}},
		{name: "unknown logger option",
			file: "trainer:\n  loggers:\n    - csv:\n        save_dri: logs\n",
			want: []string{"a.yaml:4: trainer.loggers[0].csv.save_dri: unknown key; did you mean trainer.loggers[0].csv.save_dir?"}},
		{name: "loggers disabled and listed",
			file: "trainer:\n  disable_loggers: true\n  loggers: [csv]\n",
			want: []string{"trainer.disable_loggers (a.yaml:2), trainer.loggers (a.yaml:3): loggers are disabled and listed; use one or the other"}},
		{name: "unknown flag",
			args: []string{"--trainer.max_epoch=3"},
			want: []string{"flag --trainer.max_epoch: unknown flag; did you mean --trainer.max_epochs?"}},
		{name: "bad flag value",
			args: []string{"--trainer.max_epochs=abc"},
			want: []string{`flag --trainer.max_epochs: want an integer, got "abc"`}},
		{name: "flag value volt rejects",
			args: []string{"--trainer.gradient_clip_algorithm=l2"},
			want: []string{`flag --trainer.gradient_clip_algorithm: unknown "l2"; valid: "norm", "value"`}},
		{name: "environment value volt rejects",
			env:  map[string]string{"VOLT_TRAINER_MAX_EPOCHS": "-5"},
			want: []string{"environment variable VOLT_TRAINER_MAX_EPOCHS: trainer.max_epochs: must be -1 (no limit), 0 (default) or positive, got -5"}},
		{name: "explicit zero epochs (Lightning trains none, volt's zero is its default)",
			args: []string{"--trainer.max_epochs=0"},
			want: []string{"flag --trainer.max_epochs: " + zeroMaxEpochs}},
		{name: "explicit zero epochs in a file",
			file: "trainer:\n  max_epochs: 0\n",
			want: []string{"a.yaml:2: trainer.max_epochs: " + zeroMaxEpochs}},
		{name: "misspelt environment variable",
			env:  map[string]string{"VOLT_TRAINER_MAX_EPOCH": "3", "VOLT_REQUIRE_TOOLS": "1"},
			want: []string{"environment variable VOLT_TRAINER_MAX_EPOCH: no such key; did you mean VOLT_TRAINER_MAX_EPOCHS?"}},
		{name: "data module's own check",
			args: []string{"--data.batch_size=0"},
			want: []string{"data: batch_size and examples must be >= 1, got 0 and 64"}},
		{name: "every problem at once, file order then checks",
			file: "trainer:\n  max_epoch: 3\n  precision: x\nmodel:\n  lr: fast\n",
			want: []string{"a.yaml:2: trainer.max_epoch: unknown key; did you mean trainer.max_epochs?",
				`a.yaml:5: model.lr: want a number, got "fast"`,
				`a.yaml:3: trainer.precision: unknown precision "x"; valid: "32-true", "64-true", "bf16-mixed", "bf16-true", "16-mixed", "16-true"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"fit"}
			files := map[string]string{}
			if tc.file != "" {
				files["a.yaml"] = tc.file
				args = append(args, "--config", "a.yaml")
			}
			_, err := fixture{files: files, env: tc.env, args: append(args, tc.args...)}.load(t)
			if err == nil {
				t.Fatalf("no error; want %q", tc.want)
			}
			if !errors.Is(err, ErrUsage) {
				t.Errorf("error %v is not ErrUsage", err)
			}
			if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("error:\n%s\nwant:\n%s", err, strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestErrorFields checks the parts of an *Error for programs that show
// them their own way.
func TestErrorFields(t *testing.T) {
	_, err := fixture{files: map[string]string{"a.yaml": "trainer:\n  max_epochs: 1\n  limit_val_batchs: 2\n"},
		args: []string{"fit", "--config", "a.yaml"}}.load(t)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%v is not an *Error", err)
	}
	want := Error{Key: "trainer.limit_val_batchs", File: "a.yaml", Line: 3, Problem: "unknown key", Suggestion: "trainer.limit_val_batches"}
	if *e != want {
		t.Errorf("got %+v, want %+v", *e, want)
	}
}

// TestUnknownSubcommand checks the nearest subcommand is suggested.
func TestUnknownSubcommand(t *testing.T) {
	_, err := fixture{args: []string{"fitt"}}.load(t)
	want := `unknown subcommand "fitt"; valid: [fit validate test predict export serve print-config]; did you mean fit?`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
