package main

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/voltml/volt/examples/internal/kv"
	"github.com/voltml/volt/examples/internal/stderr"
)

// TestCNNLearns trains 40 batches and checks the test accuracy on 10
// batches is far above chance: convolutions, max-pooling and their
// gradients work end to end through volt.
func TestCNNLearns(t *testing.T) {
	var out bytes.Buffer
	args := []string{"-train-batches", "40", "-eval-batches", "10", "-progress=false", "-root", t.TempDir()}
	var err error
	stderr.NoProgress(t, func() { err = run(args, &out, io.Discard) })
	if err != nil {
		t.Fatal(err)
	}
	results := kv.Parse(t, out.String())
	if acc := results["test_acc"]; acc < 0.6 {
		t.Errorf("test accuracy %v after 40 batches, want >= 0.6 (chance is 0.1)\n%s", acc, out.String())
	}
	// Read before Test, which replaces the callback metrics (it printed 0).
	if acc := results["val_acc"]; acc < 0.6 {
		t.Errorf("validation accuracy %v after 40 batches, want >= 0.6\n%s", acc, out.String())
	}
	checkPredictions(t, out.String())
}

// checkPredictions reads the predicted and true digits of the first 10
// test images from the output: digits 0-9, mostly right.
func checkPredictions(t *testing.T, out string) {
	t.Helper()
	_, pred, ok1 := strings.Cut(out, "predicted: ")
	_, truth, ok2 := strings.Cut(out, "true:      ")
	if !ok1 || !ok2 {
		t.Fatalf("no predicted/true lines in\n%s", out)
	}
	p := strings.Fields(strings.SplitN(pred, "\n", 2)[0])
	w := strings.Fields(strings.SplitN(truth, "\n", 2)[0])
	if len(p) != 10 || len(w) != 10 {
		t.Fatalf("%d predicted and %d true digits, want 10 each:\n%s", len(p), len(w), out)
	}
	right := 0
	for i := range p {
		if d, err := strconv.Atoi(p[i]); err != nil || d < 0 || d > 9 {
			t.Fatalf("predicted %q is not a digit", p[i])
		}
		if p[i] == w[i] {
			right++
		}
	}
	if right < 6 {
		t.Errorf("%d of 10 predictions right:\n%s", right, out)
	}
}
