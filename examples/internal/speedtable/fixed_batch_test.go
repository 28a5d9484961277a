package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/voltml/volt/examples/internal/zoo"
)

// TestRepeatedBatch: -fixed-batch's loader yields the one batch it was
// given, n times an epoch, fewer after a resume's skip, and stops at a
// done context; a worker run with -fixed-batch prints its step time.
func TestRepeatedBatch(t *testing.T) {
	m, err := zoo.Named("mlp")
	if err != nil {
		t.Fatal(err)
	}
	l, err := repeatedBatch(m.Loader(1, rand.New(rand.NewPCG(1, 2))), 4)
	if err != nil {
		t.Fatal(err)
	}
	if l.NumBatches() != 4 {
		t.Errorf("NumBatches() = %d, want 4", l.NumBatches())
	}
	for _, tc := range []struct{ skip, want int }{{0, 4}, {3, 1}} {
		count, first := 0, l.(sameBatch).b
		for b, err := range l.Batches(context.Background(), 0, tc.skip) {
			if err != nil || b != first {
				t.Fatalf("skip %d: batch %d is %p (err %v), want the one batch %p", tc.skip, count, b, err, first)
			}
			count++
		}
		if count != tc.want {
			t.Errorf("skip %d: %d batches, want %d", tc.skip, count, tc.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, err := range l.Batches(ctx, 0, 0) {
		if err == nil {
			t.Error("a batch after the context was done")
		}
		break
	}
	var out, errOut bytes.Buffer
	if err := run([]string{"-worker", "mlp", "-steps", "2", "-fixed-batch"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	if !regexp.MustCompile(`^ms_per_step=[0-9.]+\n$`).MatchString(out.String()) {
		t.Errorf("worker printed %q", out.String())
	}
}
