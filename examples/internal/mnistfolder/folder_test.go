package mnistfolder

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFolder: no -dir gives a new temporary folder that cleanup removes; a
// given empty folder is kept by cleanup; a user's non-empty folder is
// refused and kept.
func TestFolder(t *testing.T) {
	tmp, cleanup, err := Folder("", "volt-mnistfolder-test-")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("temporary folder not made: %v", err)
	}
	cleanup()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("cleanup left %s (%v)", tmp, err)
	}

	given := filepath.Join(t.TempDir(), "images")
	folder, cleanup, err := Folder(given, "unused-")
	if err != nil || folder != given {
		t.Fatalf("Folder(%q) = %q, %v", given, folder, err)
	}
	cleanup()
	if _, err := os.Stat(given); err != nil {
		t.Errorf("cleanup removed the user's folder: %v", err)
	}

	users := t.TempDir()
	if err := os.WriteFile(filepath.Join(users, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Folder(users, "unused-"); err == nil {
		t.Errorf("a non-empty folder without the marker was accepted")
	}
	if _, err := os.Stat(filepath.Join(users, "notes.txt")); err != nil {
		t.Errorf("the user's file is gone: %v", err)
	}
}
