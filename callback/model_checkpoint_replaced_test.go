package callback_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/internal/testutil"
)

// replaceFirstSave stands for another run given the same Dirpath: after
// the first validation's save, it writes its own file over that checkpoint
// (a new file renamed over it, as a save does).
type replaceFirstSave struct {
	dir  string
	done bool
}

func (r *replaceFirstSave) OnValidationEnd(t *volt.Trainer) error {
	if r.done || t.State().Stage == volt.RunningSanityCheck {
		return nil
	}
	matches, err := filepath.Glob(filepath.Join(r.dir, "epoch=*.ckpt"))
	if err != nil || len(matches) != 1 {
		return err
	}
	tmp := matches[0] + ".other"
	if err := os.WriteFile(tmp, []byte("another run's checkpoint"), 0o644); err != nil {
		return err
	}
	r.done = true
	return os.Rename(tmp, matches[0])
}

// TestModelCheckpointKeepsAFileAnotherProcessReplaced: when the checkpoint
// that drops out of the top k is no longer the file this run saved
// (another process wrote over it), it is kept; the run's own files are
// still removed as usual.
func TestModelCheckpointKeepsAFileAnotherProcessReplaced(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replace  bool
		wantKept bool
	}{{"replaced", true, true}, {"own file", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mc := newCkpt(t, callback.ModelCheckpointConfig{Dirpath: dir, Monitor: "score", Filename: "{epoch}"})
			callbacks := []volt.Callback{ckptScore{"score", []float64{0.5, 0.3}}, mc}
			if tc.replace {
				callbacks = append(callbacks, &replaceFirstSave{dir: dir})
			}
			tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 2, Callbacks: callbacks}))
			if err := tr.Fit(t.Context(), &ckptAdam{}, boringData()); err != nil {
				t.Fatal(err)
			}
			first := filepath.Join(dir, "epoch=0.ckpt")
			content, err := os.ReadFile(first)
			if kept := err == nil; kept != tc.wantKept {
				t.Fatalf("%s kept: %v, want %v (files %v)", first, kept, tc.wantKept, ckptFiles(t, dir))
			}
			if tc.wantKept && string(content) != "another run's checkpoint" {
				t.Errorf("%s holds %q, want the other run's content", first, content)
			}
			if _, err := os.Stat(filepath.Join(dir, "epoch=1.ckpt")); err != nil {
				t.Errorf("the better checkpoint of epoch 1: %v", err)
			}
		})
	}
}
