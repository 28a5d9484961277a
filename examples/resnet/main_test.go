package main

import (
	"bytes"
	"io"
	"testing"

	"github.com/voltml/volt/examples/internal/kv"
	"github.com/voltml/volt/examples/internal/stderr"
)

// TestResNetLearns trains 20 batches and checks that the validation and
// test accuracies on 5 batches, computed in evaluation mode with batch
// normalization's running statistics, are far above chance: residual
// blocks, batch normalization and their gradients work end to end through
// volt on the default backend.
func TestResNetLearns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: trains the ResNet example")
	}
	var out bytes.Buffer
	args := []string{"-train-batches", "20", "-eval-batches", "5", "-progress=false", "-root", t.TempDir()}
	var err error
	stderr.NoProgress(t, func() { err = run(args, &out, io.Discard) })
	if err != nil {
		t.Fatal(err)
	}
	values := kv.Parse(t, out.String())
	for _, k := range []string{"val_acc", "test_acc"} {
		if values[k] < 0.3 {
			t.Errorf("%s %v after 20 batches, want >= 0.3 (chance is 0.1)\n%s", k, values[k], out.String())
		}
	}
}
