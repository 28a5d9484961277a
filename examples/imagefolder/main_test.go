package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/voltml/volt/examples/internal/mnistfolder"
	"github.com/voltml/volt/examples/internal/stderr"
)

// valAcc runs the example small into dir and returns its val_acc.
func valAcc(t *testing.T, dir string, extra ...string) float64 {
	t.Helper()
	var out bytes.Buffer
	args := append([]string{"-dir", dir, "-train-per-class", "60", "-val-per-class", "30", "-epochs", "2", "-batch", "32",
		"-progress=false", "-root", t.TempDir()}, extra...)
	var err error
	stderr.NoProgress(t, func() { err = run(args, &out, io.Discard) })
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "val_acc="); ok {
			acc, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return acc
		}
	}
	t.Fatalf("no val_acc= line in\n%s", out.String())
	return 0
}

// TestImageFolderCNNLearns trains on 600 PNGs written by the example and
// checks the held-out accuracy is far above chance, and that the same run
// with the training images under random class folders stays near chance:
// the threshold catches a pipeline that loses the labels.
func TestImageFolderCNNLearns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: trains the CNN on a folder of PNGs")
	}
	const threshold = 0.7
	if acc := valAcc(t, t.TempDir()); acc < threshold {
		t.Errorf("val_acc %v, want >= %v (chance is 0.1)", acc, threshold)
	}
	if acc := valAcc(t, t.TempDir(), "-shuffle-labels"); acc >= threshold {
		t.Errorf("labels shuffled: val_acc %v, want < %v", acc, threshold)
	}
}

// TestImageFolderDir: a non-empty folder the example did not write is
// refused and left as it was; a folder it wrote is reused.
func TestImageFolderDir(t *testing.T) {
	foreign := t.TempDir()
	mine := filepath.Join(foreign, "notes.txt")
	if err := os.WriteFile(mine, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run([]string{"-dir", foreign, "-progress=false"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "not empty and was not written by this example") {
		t.Fatalf("foreign folder: error %v, want a refusal", err)
	}
	if entries, _ := os.ReadDir(foreign); len(entries) != 1 {
		t.Errorf("the refused folder has %d entries, want its 1 file only", len(entries))
	}
	own := filepath.Join(t.TempDir(), "new")
	if err := mnistfolder.Prepare(own); err != nil {
		t.Fatal(err)
	}
	if _, err := mnistfolder.Write(own, 1, 1, false, 1); err != nil {
		t.Fatal(err)
	}
	if err := mnistfolder.Prepare(own); err != nil {
		t.Errorf("a folder the example wrote: %v, want it reused", err)
	}
}
