package logger

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestRunDir: a run directory is claimed once (the second Claim returns
// the same path); before the claim it moves to a resumed run's directory
// that its pinned directory may continue, unless check refuses; after the
// claim, or for a directory of another root, it stays.
func TestRunDir(t *testing.T) {
	root := t.TempDir()
	pinned := func(t *testing.T) VersionDir {
		d, err := VersionDir{SaveDir: root, Name: "exp"}.Pin()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	resumed := filepath.Join(root, "exp", "version_7")
	refused := errors.New("bad position")
	for _, tc := range []struct {
		name       string
		claimFirst bool
		dir        string
		check      error
		moved      bool
		err        error
	}{
		{name: "resumes", dir: resumed, moved: true},
		{name: "check refuses", dir: resumed, check: refused, err: refused},
		{name: "another root", dir: filepath.Join(root, "other", "version_7")},
		{name: "claimed already", claimFirst: true, dir: resumed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewRunDir(pinned(t))
			before := d.Path()
			if tc.claimFirst {
				if _, err := d.Claim(); err != nil {
					t.Fatal(err)
				}
				before = d.Path()
			}
			checked := false
			moved, err := d.Resume(tc.dir, func() error { checked = true; return tc.check })
			if moved != tc.moved || !errors.Is(err, tc.err) {
				t.Fatalf("Resume = %v, %v; want %v, %v", moved, err, tc.moved, tc.err)
			}
			if checked != (tc.moved || tc.check != nil) {
				t.Errorf("check called %v", checked)
			}
			want := before
			if tc.moved {
				want = tc.dir
			}
			if d.Path() != want {
				t.Errorf("Path %s, want %s", d.Path(), want)
			}
			path, err := d.Claim()
			if err != nil {
				t.Fatal(err)
			}
			again, _ := d.Claim()
			if path != want || again != path || !d.Claimed() {
				t.Errorf("Claim %s then %s (claimed %v), want %s twice", path, again, d.Claimed(), want)
			}
			if info, err := os.Stat(path); err != nil || !info.IsDir() {
				t.Errorf("claimed directory %s: %v", path, err)
			}
		})
	}
}
