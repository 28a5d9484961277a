package callback_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
)

// TestModelCheckpointCleansTempsOfKilledSaves: the temporary files that
// saves killed in an earlier run left in the checkpoint directory are
// removed when Fit starts.
func TestModelCheckpointCleansTempsOfKilledSaves(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".epoch=0-step=4.ckpt.4242.tmp")
	if err := os.WriteFile(stale, make([]byte, 1<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	mc := newCkpt(t, callback.ModelCheckpointConfig{Dirpath: dir})
	if _, err := fit(t, quiet(volt.Config{MaxEpochs: 1}), &ckptAdam{}, boringData(), mc); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("%s left by a killed save is still there after Fit", stale)
	}
}
