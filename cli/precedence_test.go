package cli

import (
	"testing"
)

// TestPrecedence checks the order in which sources override each other:
// program defaults < environment < files in order < flags in order,
// wherever the flag stands on the command line.
func TestPrecedence(t *testing.T) {
	a := "trainer:\n  max_epochs: 3\n  callbacks: [timer, {early_stopping: {monitor: val_loss}}]\nmodel:\n  lr: 0.2\n"
	b := "trainer:\n  max_epochs: 4\n  callbacks: [learning_rate_monitor]\n"
	env := map[string]string{"VOLT_TRAINER_MAX_EPOCHS": "7", "VOLT_DATA_BATCH_SIZE": "4"}
	defaults := WithDefaultConfig("defaults.yaml", []byte("trainer:\n  max_epochs: 2\ndata:\n  batch_size: 2\n"))
	files := map[string]string{"a.yaml": a, "b.yaml": b}
	tests := []struct {
		name      string
		env       map[string]string
		args      []string
		opts      []Option
		maxEpochs int
		lr        float64
		batchSize int
		callbacks string
	}{
		{name: "nothing set keeps the module's and Config's defaults (written out: max_epochs 1000)", args: []string{"fit"},
			maxEpochs: 1000, lr: 0.05, batchSize: 16},
		{name: "program defaults", opts: []Option{defaults}, args: []string{"fit"},
			maxEpochs: 2, lr: 0.05, batchSize: 2},
		{name: "environment over program defaults", env: env, opts: []Option{defaults}, args: []string{"fit"},
			maxEpochs: 7, lr: 0.05, batchSize: 4},
		{name: "file over environment", env: env, args: []string{"fit", "--config", "a.yaml"},
			maxEpochs: 3, lr: 0.2, batchSize: 4, callbacks: "timer,early_stopping"},
		{name: "later file over earlier, list replaced whole, other keys kept", args: []string{"fit", "--config", "a.yaml", "--config", "b.yaml"},
			maxEpochs: 4, lr: 0.2, batchSize: 16, callbacks: "learning_rate_monitor"},
		{name: "file order decides, not file names", args: []string{"fit", "--config=b.yaml", "--config=a.yaml"},
			maxEpochs: 3, lr: 0.2, batchSize: 16, callbacks: "timer,early_stopping"},
		{name: "flag over files even when written first", env: env, args: []string{"fit", "--trainer.max_epochs=9", "--config", "a.yaml", "--config", "b.yaml"},
			maxEpochs: 9, lr: 0.2, batchSize: 4, callbacks: "learning_rate_monitor"},
		{name: "last flag wins; space-separated values and dashes", args: []string{"fit", "--trainer.max-epochs", "5", "--trainer.max_epochs=6", "--model.lr", "0.5", "--data.batch-size=8"},
			maxEpochs: 6, lr: 0.5, batchSize: 8},
		{name: "list flag replaces the files' list", args: []string{"fit", "--config", "a.yaml", "--trainer.callbacks=[timer]"},
			maxEpochs: 3, lr: 0.2, batchSize: 16, callbacks: "timer"},
		{name: "one item alone is a list of one", args: []string{"fit", "--config", "a.yaml", "--trainer.callbacks={early_stopping: {monitor: val_loss}}"},
			maxEpochs: 3, lr: 0.2, batchSize: 16, callbacks: "early_stopping"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := fixture{files: files, env: tc.env, args: tc.args, opts: tc.opts}.load(t)
			if err != nil {
				t.Fatal(err)
			}
			got := l.inv.rc.trainer.MaxEpochs
			if got != tc.maxEpochs || l.model.LR != tc.lr || l.data.BatchSize != tc.batchSize || l.callbackNames() != tc.callbacks {
				t.Errorf("got max_epochs=%d lr=%v batch_size=%d callbacks=%q, want %d %v %d %q",
					got, l.model.LR, l.data.BatchSize, l.callbackNames(), tc.maxEpochs, tc.lr, tc.batchSize, tc.callbacks)
			}
		})
	}
}
