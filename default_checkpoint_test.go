package volt_test

import (
	"path/filepath"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
)

func TestDefaultCheckpointKeepsTheLatestEpoch(t *testing.T) {
	root := t.TempDir()
	cfg := quiet(volt.Config{MaxEpochs: 3, DefaultRootDir: root})
	cfg.DisableLoggers = false
	tr := testutil.Fit(t, cfg, &boring{}, boringData())
	files, _ := filepath.Glob(filepath.Join(root, "volt_logs", "version_0", "checkpoints", "*.ckpt"))
	if len(files) != 1 || filepath.Base(files[0]) != "epoch=2-step=12.ckpt" {
		t.Fatalf("checkpoints %v, want only epoch=2-step=12.ckpt", files)
	}
	if tr.LastCheckpoint() != files[0] {
		t.Errorf("LastCheckpoint %q, want %q", tr.LastCheckpoint(), files[0])
	}
	// Resuming from it with more epochs continues where it stopped.
	cfg.MaxEpochs, cfg.DefaultRootDir = 4, t.TempDir()
	r := testutil.Fit(t, cfg, &boring{}, boringData(), volt.FromCheckpoint(files[0]))
	if r.GlobalStep() != 16 {
		t.Errorf("resumed run ends at step %d, want 16", r.GlobalStep())
	}
}
