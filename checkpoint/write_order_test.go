package checkpoint_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/voltml/volt/checkpoint"
)

// TestSavesAreOrderedByModTime: checkpoints saved one after the other get
// strictly increasing modification times even within one tick of the file
// system's clock, so the newest file is the one written last (what
// FromCheckpoint("last") in a new trainer looks for).
func TestSavesAreOrderedByModTime(t *testing.T) {
	dir := t.TempDir()
	var prev os.FileInfo
	for i := range 20 {
		path := filepath.Join(dir, []string{"a.ckpt", "b.ckpt"}[i%2])
		if err := checkpoint.Save(path, &checkpoint.File{}); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if prev != nil && !info.ModTime().After(prev.ModTime()) {
			t.Fatalf("save %d: modification time %v is not after the previous save's %v", i, info.ModTime(), prev.ModTime())
		}
		prev = info
	}
}
