package main

import (
	"bytes"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voltml/volt/examples/internal/kv"
	"github.com/voltml/volt/examples/internal/stderr"
)

// TestAutoencoderLearns trains 200 batches and checks, on 10 test
// batches, that the reconstruction error is under half of the mean-image
// baseline (the autoencoder encodes the digit in front of it, not only
// the average pixels), and that -png writes the 10 digits above their
// reconstructions.
func TestAutoencoderLearns(t *testing.T) {
	dir := t.TempDir()
	pngPath := filepath.Join(dir, "reconstructions.png")
	var out bytes.Buffer
	args := []string{"-epochs", "1", "-train-batches", "200", "-eval-batches", "10", "-progress=false", "-root", dir, "-png", pngPath}
	var err error
	stderr.NoProgress(t, func() { err = run(args, &out, io.Discard) })
	if err != nil {
		t.Fatal(err)
	}
	values := kv.Parse(t, out.String())
	baseline, mse := values["baseline_mse"], values["test_mse"]
	// MNIST's pixel variance about the mean image is about 0.067.
	if baseline < 0.05 || baseline > 0.08 {
		t.Errorf("baseline_mse %v, want about 0.067\n%s", baseline, out.String())
	}
	if mse <= 0 || mse > baseline/2 {
		t.Errorf("test_mse %v after 200 batches, want > 0 and under half the mean-image baseline %v\n%s", mse, baseline, out.String())
	}
	t.Logf("test_mse %.5f, mean-image baseline %.5f", mse, baseline)
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 280 || b.Dy() != 56 {
		t.Errorf("%s is %v, want 280×56 (10 digits above their reconstructions)", pngPath, b)
	}
}

// TestAutoencoderRejectsEmptyCode: -code 0 is an error naming the flag.
func TestAutoencoderRejectsEmptyCode(t *testing.T) {
	err := run([]string{"-code", "0", "-progress=false", "-root", t.TempDir()}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-code") {
		t.Errorf("run(-code 0) = %v, want an error naming -code", err)
	}
}
