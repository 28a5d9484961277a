package volt_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/internal/testutil"
)

// TestBestAndLastModelPath: Trainer.BestModelPath and LastModelPath are
// Lightning's checkpoint_callback.best_model_path and last_model_path.
// Lightning 2.2.5's default checkpointing, one epoch of 4 batches, reports
// best_model_path <root>/checkpoints/epoch=0-step=4.ckpt and
// last_model_path "" (no save_last); a ModelCheckpoint reports its own.
func TestBestAndLastModelPath(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      func(dir string) (volt.Config, *callback.ModelCheckpoint)
		wantBest func(dir string, mc *callback.ModelCheckpoint) string
		wantLast func(dir string, mc *callback.ModelCheckpoint) string
	}{
		{"default checkpointing",
			func(dir string) (volt.Config, *callback.ModelCheckpoint) {
				return volt.Config{MaxEpochs: 2, DefaultRootDir: dir}, nil
			},
			func(dir string, _ *callback.ModelCheckpoint) string {
				return filepath.Join(dir, "volt_logs", "version_0", "checkpoints", "epoch=1-step=8.ckpt")
			},
			func(string, *callback.ModelCheckpoint) string { return "" }},
		{"ModelCheckpoint with SaveLast",
			func(dir string) (volt.Config, *callback.ModelCheckpoint) {
				mc := callback.NewModelCheckpoint(callback.ModelCheckpointConfig{Monitor: "val_loss", SaveLast: true, Dirpath: filepath.Join(dir, "ck")})
				return volt.Config{MaxEpochs: 2, DefaultRootDir: dir, Callbacks: []volt.Callback{mc}}, mc
			},
			func(_ string, mc *callback.ModelCheckpoint) string { return mc.BestModelPath() },
			func(dir string, _ *callback.ModelCheckpoint) string { return filepath.Join(dir, "ck", "last.ckpt") }},
		{"checkpointing disabled",
			func(dir string) (volt.Config, *callback.ModelCheckpoint) {
				return volt.Config{MaxEpochs: 2, DefaultRootDir: dir, DisableCheckpointing: true}, nil
			},
			func(string, *callback.ModelCheckpoint) string { return "" },
			func(string, *callback.ModelCheckpoint) string { return "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg, mc := tc.cfg(dir)
			cfg.EnableProgressBar, cfg.DisableModelSummary, cfg.Log = volt.Ptr(false), true, slog.New(slog.DiscardHandler)
			tr, err := volt.NewTrainer(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Fit(context.Background(), &testutil.Boring{}, testutil.NewBoringDataModule()); err != nil {
				t.Fatal(err)
			}
			best, last := tr.BestModelPath(), tr.LastModelPath()
			if want := tc.wantBest(dir, mc); best != want || (want != "" && !fileExists(want)) {
				t.Errorf("BestModelPath %q, want %q (existing)", best, want)
			}
			if want := tc.wantLast(dir, mc); last != want || (want != "" && !fileExists(want)) {
				t.Errorf("LastModelPath %q, want %q (existing)", last, want)
			}
			if mc != nil && best == "" {
				t.Error("the ModelCheckpoint saved no best file")
			}
		})
	}
}
