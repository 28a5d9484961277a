package cli

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/voltml/volt/internal/testutil"
)

// BenchmarkLoad measures reading and checking a config: one file with
// callbacks and loggers, flags and an environment variable, as fit does
// before training starts.
func BenchmarkLoad(b *testing.B) {
	path := filepath.Join(b.TempDir(), "a.yaml")
	text := "trainer:\n  max_epochs: 3\n  limit_val_batches: 0.5\n  callbacks:\n    - early_stopping: {monitor: val_loss}\n    - model_checkpoint: {monitor: val_loss, save_top_k: 2}\n  loggers: [csv]\nmodel:\n  lr: 0.1\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	opts := []Option{WithArgs("fit", "--config", path, "--trainer.max_epochs=5", "--data.batch_size=8"),
		WithOutput(io.Discard, io.Discard), WithEnviron([]string{"VOLT_TRAINER_PRECISION=64-true"})}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := load(newSettings(opts), &testutil.Boring{}, testutil.NewBoringDataModule()); err != nil {
			b.Fatal(err)
		}
	}
}
