package main

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"
)

// TestCNNLearns trains 40 batches and checks the test accuracy on 10
// batches is far above chance: convolutions, max-pooling and their
// gradients work end to end through volt.
func TestCNNLearns(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-train-batches", "40", "-eval-batches", "10", "-progress=false", "-root", t.TempDir()}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var acc float64
	for _, line := range strings.Split(out.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "test_acc="); ok {
			acc, _ = strconv.ParseFloat(v, 64)
		}
	}
	if acc < 0.6 {
		t.Errorf("test accuracy %v after 40 batches, want >= 0.6 (chance is 0.1)\n%s", acc, out.String())
	}
}
