package cli

import (
	"strings"
	"testing"
)

// TestPrintConfigShowsMoreCallbackDefaults: print-config shows the
// defaults that zero options stand for in the other callbacks with such
// defaults (Lightning's values where Lightning has the callback).
func TestPrintConfigShowsMoreCallbackDefaults(t *testing.T) {
	l, err := fixture{
		files: map[string]string{"a.yaml": "trainer:\n  enable_progress_bar: true\n  callbacks:\n" +
			"    - timer: {}\n    - on_exception_checkpoint: {dirpath: d}\n    - prediction_writer: {}\n" +
			"    - ema_weight_averaging: {}\n    - backbone_finetuning: {}\n    - model_summary: {}\n" +
			"    - learning_rate_monitor: {}\n    - progress_bar: {}\n"},
		args: []string{"print-config", "--config", "a.yaml"},
	}.load(t)
	if err != nil {
		t.Fatal(err)
	}
	got := l.printed(t)
	for _, want := range []string{
		"- timer:\n        max_time: 0s\n        interval: step\n",
		"filename: on_exception.ckpt\n",
		"- prediction_writer:\n        dir: predictions\n        write_interval: batch\n",
		"decay: 0.999\n        update_every: 1\n",
		"use_for_validation: true\n        copy_to_model: true\n",
		"scope: /backbone\n        unfreeze_at_epoch: 10\n        initial_ratio: 0.1\n        multiplier: 1.5\n",
		"- model_summary:\n        max_depth: 1\n",
		"logging_interval: epoch\n",
		"refresh_interval: 100ms\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("print-config lacks\n%s\nin\n%s", want, got)
		}
	}
}

// TestPrintConfigShowsLoggerDefaults: print-config shows the defaults of
// the loggers' zero options (save_dir ., name volt_logs, the flush
// settings), and leaves a chosen version unset, so that the saved config
// run again takes the next free version rather than reusing this one.
func TestPrintConfigShowsLoggerDefaults(t *testing.T) {
	l, err := fixture{
		files: map[string]string{"a.yaml": "trainer:\n  loggers:\n    - csv: {}\n    - jsonl: {}\n    - tensorboard: {flush_every: 3}\n"},
		args:  []string{"print-config", "--config", "a.yaml"},
	}.load(t)
	if err != nil {
		t.Fatal(err)
	}
	got := l.printed(t)
	for _, want := range []string{
		"- csv:\n        save_dir: .\n        name: volt_logs\n        version: null\n        version_name: \"\"\n        flush_every: 100\n",
		"- jsonl:\n        save_dir: .\n        name: volt_logs\n        version: null\n",
		"- tensorboard:\n        save_dir: .\n        name: volt_logs\n        version: null\n        version_name: \"\"\n        flush_every: 3\n        flush_interval: 2m0s\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("print-config lacks\n%s\nin\n%s", want, got)
		}
	}
}
