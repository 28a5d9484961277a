package checkpoint_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/voltml/volt/checkpoint"
)

// TestRemoveStaleTempsRemovesOnlyIdleSaveTemps: the temporary files of
// killed saves go; checkpoints, other files and a save still being written
// stay.
func TestRemoveStaleTempsRemovesOnlyIdleSaveTemps(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	files := []struct {
		name    string
		old     bool
		removed bool
	}{
		{".epoch=1-step=8.ckpt.123456.tmp", true, true},
		{".last.ckpt.99.tmp", true, true},
		{".epoch=2-step=16.ckpt.777.tmp", false, false}, // a save in progress
		{"epoch=1-step=8.ckpt", true, false},
		{".hidden", true, false},
		{"notes.tmp", true, false},
		{".metrics.csv.1.tmp", true, false}, // not a checkpoint's
	}
	var want []string
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if f.old {
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
		}
		if f.removed {
			want = append(want, path)
		}
	}
	slices.Sort(want)
	got, err := checkpoint.RemoveStaleTemps(dir, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("removed %v, want %v", got, want)
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f.name)); (err == nil) == f.removed {
			t.Errorf("%s: exists %v, want %v", f.name, err == nil, !f.removed)
		}
	}
	if got, err := checkpoint.RemoveStaleTemps(filepath.Join(dir, "missing"), time.Minute); err != nil || got != nil {
		t.Errorf("missing directory: %v, %v", got, err)
	}
}
