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

// TestFlagErrors: a flag volt would misread or a model could not be built
// from is refused naming it (-hidden 0 was "integer divide by zero" from
// the layer's initializer; -epochs 0 trained 1000 epochs).
func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"-hidden", "0"}, "-examples, -batch and -hidden must be positive, got 2048, 64, 0"},
		{[]string{"-epochs", "0"}, `invalid value "0" for flag -epochs: 0 trains no epoch in Lightning`},
	} {
		err := run(tc.flags, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%v) = %v, want an error containing %q", tc.flags, err, tc.want)
		}
	}
}
