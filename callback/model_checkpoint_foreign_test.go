package callback_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/internal/testutil"
)

// TestModelCheckpointKeepsAnotherRunsFiles: a Fit resumed from run A's
// checkpoint, saving into its own directory, never deletes A's files (the
// restored BestModelPath points into A's directory), with or without a
// monitor.
func TestModelCheckpointKeepsAnotherRunsFiles(t *testing.T) {
	tests := []struct {
		name string
		cfg  callback.ModelCheckpointConfig
	}{
		{"latest, top 1", callback.ModelCheckpointConfig{SaveLast: true}},
		{"monitored, top 1", callback.ModelCheckpointConfig{Monitor: "score", SaveLast: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fitWith := func(dir string, epochs int, opts ...volt.RunOption) {
				t.Helper()
				cfg := tc.cfg
				cfg.Dirpath = dir
				mc := newCkpt(t, cfg)
				tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: epochs,
					Callbacks: []volt.Callback{ckptScore{"score", []float64{0.5, 0.3, 0.4, 0.2}}, mc}}))
				if err := tr.Fit(t.Context(), &ckptAdam{}, boringData(), opts...); err != nil {
					t.Fatal(err)
				}
			}
			a, b := t.TempDir(), t.TempDir()
			fitWith(a, 2)
			before := ckptFiles(t, a)
			fitWith(b, 4, volt.FromCheckpoint(filepath.Join(a, "last.ckpt")))
			if got := ckptFiles(t, a); !slices.Equal(got, before) {
				t.Errorf("run A's directory after run B: %v, want it untouched: %v", got, before)
			}
			if got := ckptFiles(t, b); len(got) == 0 {
				t.Errorf("run B saved nothing in its directory")
			}
		})
	}
}
