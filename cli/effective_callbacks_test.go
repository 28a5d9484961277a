package cli

import (
	"strings"
	"testing"
)

// TestPrintConfigShowsCallbackDefaults: print-config shows the options a
// callback takes when a zero value stands for a default (EarlyStopping's
// patience 3, mode min, strict and check_finite true; ModelCheckpoint's
// save_top_k 1, every_n_epochs 1, filename; StochasticWeightAveraging's
// start_fraction 0.8, annealing_epochs 10, annealing_strategy cos), and a
// value given stays as given.
func TestPrintConfigShowsCallbackDefaults(t *testing.T) {
	l, err := fixture{
		files: map[string]string{"a.yaml": "trainer:\n  callbacks:\n    - early_stopping: {monitor: val_loss}\n    - early_stopping: {monitor: train_loss, patience: 7, mode: max}\n    - model_checkpoint: {monitor: val_loss}\n    - stochastic_weight_averaging: {swa_lrs: [0.01]}\n"},
		args:  []string{"print-config", "--config", "a.yaml"},
	}.load(t)
	if err != nil {
		t.Fatal(err)
	}
	got := l.printed(t)
	for _, want := range []string{
		"- early_stopping:\n        monitor: val_loss\n        min_delta: 0.0\n        patience: 3\n        mode: min\n        strict: true\n        check_finite: true\n",
		"- early_stopping:\n        monitor: train_loss\n        min_delta: 0.0\n        patience: 7\n        mode: max\n        strict: true\n        check_finite: true\n",
		"save_top_k: 1\n",
		"every_n_epochs: 1\n",
		"filename: '{epoch}-{step}'\n",
		"start_fraction: 0.8\n",
		"annealing_epochs: 10\n",
		"annealing_strategy: cos\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("print-config lacks\n%s\nin\n%s", want, got)
		}
	}
}
