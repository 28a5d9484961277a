package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/voltml/volt/internal/testutil"
)

// TestHelpShowsProgramDefaults: "fit --help" shows the values of the
// program's default config (WithDefaultConfig), as print-config does, not
// volt.Config's zero values.
func TestHelpShowsProgramDefaults(t *testing.T) {
	defaults := []byte("seed_everything: 42\ntrainer:\n  max_epochs: 3\nmodel:\n  lr: 0.125\ndata:\n  batch_size: 32\n")
	for _, cmd := range []string{"fit", "test", "serve", "export"} {
		t.Run(cmd, func(t *testing.T) {
			var stderr bytes.Buffer
			err := Run(t.Context(), func() *testutil.Boring { return &testutil.Boring{} }, testutil.NewBoringDataModule,
				WithArgs(cmd, "--help"), WithOutput(&bytes.Buffer{}, &stderr), WithEnvPrefix(""),
				WithDefaultConfig("defaults.yaml", defaults))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"--seed_everything int (default: 42)", "--trainer.max_epochs int (default: 3)",
				"--model.lr float (default: 0.125)", "--data.batch_size int (default: 32)"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("%s --help does not show %q", cmd, want)
				}
			}
		})
	}
}
