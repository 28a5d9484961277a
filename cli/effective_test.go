package cli

import (
	"strings"
	"testing"
)

// TestPrintConfigShowsEffectiveDefaults: print-config writes the values a
// run uses, not Go's zero values: the trainer's (log_every_n_steps 50, not
// 0), following what is set (max_epochs -1 once max_steps is); the options
// of every callback and logger whose zero value stands for a default
// (Lightning's values where Lightning has the callback); a value given
// stays as given; and a logger's version stays unset, so that the saved
// config run again takes the next free version rather than reusing this
// one.
func TestPrintConfigShowsEffectiveDefaults(t *testing.T) {
	tests := []struct {
		name string
		yaml string // a.yaml, given with --config when not empty
		args []string
		want []string
	}{
		{name: "trainer", want: []string{"  max_epochs: 1000\n", "  max_steps: -1\n", "  log_every_n_steps: 50\n",
			"  precision: 32-true\n", "  check_val_every_n_epoch: 1\n", "  num_sanity_val_steps: 2\n",
			"  accumulate_grad_batches: 1\n", "  gradient_clip_algorithm: norm\n", "  default_root_dir: .\n",
			"  accelerator: auto\n", "  num_nodes: 1\n", "  shard_uneven: pad_repeat\n"}},
		{name: "trainer max_steps set", args: []string{"--trainer.max_steps=10", "--trainer.log_every_n_steps=5"},
			want: []string{"  max_epochs: -1\n", "  max_steps: 10\n", "  log_every_n_steps: 5\n"}},
		{
			name: "early_stopping model_checkpoint swa",
			yaml: "trainer:\n  callbacks:\n    - early_stopping: {monitor: val_loss}\n    - early_stopping: {monitor: train_loss, patience: 7, mode: max}\n    - model_checkpoint: {monitor: val_loss}\n    - stochastic_weight_averaging: {swa_lrs: [0.01]}\n",
			want: []string{
				"- early_stopping:\n        monitor: val_loss\n        min_delta: 0.0\n        patience: 3\n        mode: min\n        strict: true\n        check_finite: true\n",
				"- early_stopping:\n        monitor: train_loss\n        min_delta: 0.0\n        patience: 7\n        mode: max\n        strict: true\n        check_finite: true\n",
				"save_top_k: 1\n",
				"every_n_epochs: 1\n",
				"filename: '{epoch}-{step}'\n",
				"start_fraction: 0.8\n",
				"annealing_epochs: 10\n",
				"annealing_strategy: cos\n",
			},
		},
		{
			name: "other callbacks",
			yaml: "trainer:\n  enable_progress_bar: true\n  callbacks:\n" +
				"    - timer: {}\n    - on_exception_checkpoint: {dirpath: d}\n    - prediction_writer: {}\n" +
				"    - ema_weight_averaging: {}\n    - backbone_finetuning: {}\n    - model_summary: {}\n" +
				"    - learning_rate_monitor: {}\n    - progress_bar: {}\n",
			want: []string{
				"- timer:\n        max_time: 0s\n        interval: step\n",
				"filename: on_exception.ckpt\n",
				"- prediction_writer:\n        dir: predictions\n        write_interval: batch\n",
				"decay: 0.999\n        update_every: 1\n",
				"use_for_validation: true\n        copy_to_model: true\n",
				"backbone: [backbone]\n        unfreeze_at_epoch: 10\n        initial_ratio: 0.1\n        initial_lr: 0.0\n        multiplier: 2.0\n",
				"- model_summary:\n        max_depth: 1\n",
				"logging_interval: epoch\n",
				"refresh_interval: 100ms\n",
			},
		},
		{
			name: "loggers",
			yaml: "trainer:\n  loggers:\n    - csv: {}\n    - jsonl: {}\n    - tensorboard: {flush_every: 3}\n",
			want: []string{
				"- csv:\n        save_dir: .\n        name: volt_logs\n        version: null\n        version_name: \"\"\n        flush_every: 100\n",
				"- jsonl:\n        save_dir: .\n        name: volt_logs\n        version: null\n",
				"- tensorboard:\n        save_dir: .\n        name: volt_logs\n        version: null\n        version_name: \"\"\n        flush_every: 3\n        flush_interval: 2m0s\n",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := fixture{args: append([]string{"print-config"}, tc.args...)}
			if tc.yaml != "" {
				f.files = map[string]string{"a.yaml": tc.yaml}
				f.args = append(f.args, "--config", "a.yaml")
			}
			l, err := f.load(t)
			if err != nil {
				t.Fatal(err)
			}
			got := l.printed(t)
			for _, want := range tc.want {
				if !strings.Contains(got, want) {
					t.Errorf("print-config lacks\n%s\nin\n%s", want, got)
				}
			}
		})
	}
}
