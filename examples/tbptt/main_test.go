package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestTBPTTExampleLearns(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-epochs", "2", "-examples", "128", "-split", "16"}, &out); err != nil {
		t.Fatal(err)
	}
	var steps, splits int
	var before, after float64
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if _, err := fmt.Sscanf(lines[0], "steps=%d (%d splits per batch)", &steps, &splits); err != nil {
		t.Fatalf("%q: %v", lines[0], err)
	}
	if _, err := fmt.Sscanf(lines[1], "val_loss before=%f after=%f", &before, &after); err != nil {
		t.Fatalf("%q: %v", lines[1], err)
	}
	// 128 sequences in batches of 32, 3 splits of 16 steps, 2 epochs.
	if splits != 3 || steps != 2*4*3 {
		t.Errorf("steps=%d splits=%d, want 24 and 3", steps, splits)
	}
	if !(after < before) {
		t.Errorf("validation loss did not improve: %v -> %v", before, after)
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
		{[]string{"-hidden", "0"}, "-hidden and -examples must be positive, got 0, 512"},
		{[]string{"-epochs", "0"}, `invalid value "0" for flag -epochs: 0 trains no epoch in Lightning`},
	} {
		err := run(tc.flags, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%v) = %v, want an error containing %q", tc.flags, err, tc.want)
		}
	}
}
