package callback_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/internal/testutil"
)

// TestModelCheckpointRemovesOrphansOfKilledRuns: a run killed between
// writing a new top-k checkpoint and removing the one it replaced leaves that
// file behind; a Fit resumed in the same directory removes it (the restored
// bookkeeping had dropped it), and keeps files it did not write.
func TestModelCheckpointRemovesOrphansOfKilledRuns(t *testing.T) {
	dir := t.TempDir()
	cfg := callback.ModelCheckpointConfig{Dirpath: dir, SaveLast: true}
	fitTo := func(epochs int, opts ...volt.RunOption) *volt.Trainer {
		t.Helper()
		tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: epochs, Callbacks: []volt.Callback{newCkpt(t, cfg)}}), &ckptAdam{}, boringData(), opts...)
		return tr
	}
	tr := fitTo(1)
	orphan := filepath.Join(dir, "epoch=0-step=4.ckpt")
	kept, err := os.ReadFile(orphan)
	if err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "mine.ckpt") // saved by the user, not by ModelCheckpoint
	if err := tr.SaveCheckpoint(foreign, false); err != nil {
		t.Fatal(err)
	}
	fitTo(2, volt.FromCheckpoint(filepath.Join(dir, "last.ckpt")))
	// The kill: epoch 1's file is written, epoch 0's removal never happens.
	if err := os.WriteFile(orphan, kept, 0o644); err != nil {
		t.Fatal(err)
	}
	fitTo(3, volt.FromCheckpoint(filepath.Join(dir, "last.ckpt")))
	want := []string{"epoch=2-step=12.ckpt", "last.ckpt", "mine.ckpt"}
	if got := ckptFiles(t, dir); !slices.Equal(got, want) {
		t.Errorf("files after the resumed run: %v, want %v", got, want)
	}
}

// TestModelCheckpointSaveTopKAllKeepsEveryFileOnResume: with SaveTopK -1
// every checkpoint is kept, so a resumed Fit finds no orphans and removes
// none (without a Monitor the bookkeeping holds only the latest file; the
// earlier ones were all removed as orphans).
func TestModelCheckpointSaveTopKAllKeepsEveryFileOnResume(t *testing.T) {
	for _, monitor := range []string{"", "train_loss"} {
		t.Run("monitor="+monitor, func(t *testing.T) {
			dir := t.TempDir()
			cfg := callback.ModelCheckpointConfig{Dirpath: dir, SaveLast: true, SaveTopK: volt.Ptr(-1), EveryNTrainSteps: 2, Monitor: monitor}
			fitTo := func(epochs int, opts ...volt.RunOption) {
				t.Helper()
				testutil.Fit(t, quiet(volt.Config{MaxEpochs: epochs, Callbacks: []volt.Callback{newCkpt(t, cfg)}}), &ckptAdam{}, boringData(), opts...)
			}
			fitTo(1)
			fitTo(2, volt.FromCheckpoint(filepath.Join(dir, "last.ckpt")))
			got := ckptFiles(t, dir)
			want := []string{"epoch=0-step=2.ckpt", "epoch=0-step=4.ckpt", "epoch=1-step=6.ckpt", "epoch=1-step=8.ckpt", "last.ckpt"}
			if !slices.Equal(got, want) {
				t.Errorf("files after the resumed run: %v, want %v", got, want)
			}
		})
	}
}
