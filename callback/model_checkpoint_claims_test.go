package callback_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/internal/testutil"
)

// TestModelCheckpointClaimsNames: a name another run claims (a live
// ".<name>.ckpt.claim") or has written is not taken, the next "-vN" is,
// and neither is touched; a claim a killed run left an hour ago is removed
// when Fit starts; a run replaces its own file under its own name; no claim
// of the run outlives its save.
func TestModelCheckpointClaimsNames(t *testing.T) {
	for _, tc := range []struct {
		name     string
		filename string
		epochs   int
		before   map[string]time.Duration // file -> age
		want     []string                 // the directory after Fit
		wantBest string
	}{
		{name: "another run's live claim", filename: "{epoch}", epochs: 1,
			before: map[string]time.Duration{".epoch=0.ckpt.claim": 0},
			want:   []string{".epoch=0.ckpt.claim", "epoch=0-v1.ckpt"}, wantBest: "epoch=0-v1.ckpt"},
		{name: "another run's file", filename: "{epoch}", epochs: 1,
			before: map[string]time.Duration{"epoch=0.ckpt": 0},
			want:   []string{"epoch=0-v1.ckpt", "epoch=0.ckpt"}, wantBest: "epoch=0-v1.ckpt"},
		{name: "claims of the file and of its -v1", filename: "{epoch}", epochs: 1,
			before: map[string]time.Duration{".epoch=0.ckpt.claim": 0, ".epoch=0-v1.ckpt.claim": time.Minute},
			want:   []string{".epoch=0-v1.ckpt.claim", ".epoch=0.ckpt.claim", "epoch=0-v2.ckpt"}, wantBest: "epoch=0-v2.ckpt"},
		{name: "a killed run's stale claim", filename: "{epoch}", epochs: 1,
			before: map[string]time.Duration{".epoch=0.ckpt.claim": 2 * time.Hour},
			want:   []string{"epoch=0.ckpt"}, wantBest: "epoch=0.ckpt"},
		{name: "its own file, replaced under its name", filename: "fixed", epochs: 3,
			want: []string{"fixed.ckpt"}, wantBest: "fixed.ckpt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, age := range tc.before {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte("another run's"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(p, time.Now().Add(-age), time.Now().Add(-age)); err != nil {
					t.Fatal(err)
				}
			}
			mc := newCkpt(t, callback.ModelCheckpointConfig{Dirpath: dir, Filename: tc.filename})
			testutil.Fit(t, quiet(volt.Config{MaxEpochs: tc.epochs, Callbacks: []volt.Callback{mc}}), &ckptAdam{}, boringData())
			if got := ckptFiles(t, dir); !slices.Equal(got, tc.want) {
				t.Errorf("files %q, want %q", got, tc.want)
			}
			if got := filepath.Base(mc.BestModelPath()); got != tc.wantBest {
				t.Errorf("BestModelPath %s, want %s", got, tc.wantBest)
			}
			for name, age := range tc.before {
				if age >= time.Hour {
					continue
				}
				if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != "another run's" {
					t.Errorf("%s: %q, %v; want it untouched", name, b, err)
				}
			}
		})
	}
}

// TestModelCheckpointLastIsItsOwn: with SaveLast, a run whose directory
// holds another run's last.ckpt writes last-v1.ckpt and leaves that file
// alone (Lightning's versioned last); a Fit resumed from its own last file
// in the same directory goes on writing that file.
func TestModelCheckpointLastIsItsOwn(t *testing.T) {
	fit := func(dir string, epochs int, opts ...volt.RunOption) *callback.ModelCheckpoint {
		t.Helper()
		mc := newCkpt(t, callback.ModelCheckpointConfig{Dirpath: dir, Filename: "{epoch}", SaveLast: true})
		tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: epochs, Callbacks: []volt.Callback{mc}}))
		if err := tr.Fit(t.Context(), &ckptAdam{}, boringData(), opts...); err != nil {
			t.Fatal(err)
		}
		return mc
	}
	for _, tc := range []struct {
		name     string
		setup    func(t *testing.T, dir string) []volt.RunOption
		want     []string
		wantLast string
	}{
		{"a fresh directory", func(*testing.T, string) []volt.RunOption { return nil },
			[]string{"epoch=2.ckpt", "last.ckpt"}, "last.ckpt"},
		{"another run's last.ckpt", func(t *testing.T, dir string) []volt.RunOption {
			if err := os.WriteFile(filepath.Join(dir, "last.ckpt"), []byte("another run's"), 0o644); err != nil {
				t.Fatal(err)
			}
			return nil
		}, []string{"epoch=2.ckpt", "last-v1.ckpt", "last.ckpt"}, "last-v1.ckpt"},
		{"resumed from its own last.ckpt", func(t *testing.T, dir string) []volt.RunOption {
			fit(dir, 1)
			return []volt.RunOption{volt.FromCheckpoint(filepath.Join(dir, "last.ckpt"))}
		}, []string{"epoch=2.ckpt", "last.ckpt"}, "last.ckpt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := tc.setup(t, dir)
			mc := fit(dir, 3, opts...)
			if got := ckptFiles(t, dir); !slices.Equal(got, tc.want) {
				t.Errorf("files %q, want %q", got, tc.want)
			}
			if got := filepath.Base(mc.LastModelPath()); got != tc.wantLast {
				t.Errorf("LastModelPath %s, want %s", got, tc.wantLast)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "last.ckpt")); tc.wantLast != "last.ckpt" && string(b) != "another run's" {
				t.Errorf("the other run's last.ckpt was replaced")
			}
		})
	}
}
