package main

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestGANExampleRuns(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-epochs", "3", "-examples", "512"}, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var steps int
	var g, d, before, after float64
	if _, err := fmt.Sscanf(lines[0], "steps=%d g_loss=%f d_loss=%f", &steps, &g, &d); err != nil {
		t.Fatalf("%q: %v", lines[0], err)
	}
	if _, err := fmt.Sscanf(lines[1], "ring_distance before=%f after=%f", &before, &after); err != nil {
		t.Fatalf("%q: %v", lines[1], err)
	}
	// Both optimizers step on each batch, and each Step is a global step
	// (Lightning's manual optimization counts them so too).
	if steps != 3*8*2 {
		t.Errorf("steps=%d, want 48", steps)
	}
	for _, v := range []float64{g, d, after} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("non-finite value in %q", out.String())
		}
	}
	if after == before {
		t.Error("the generator did not change")
	}
}
