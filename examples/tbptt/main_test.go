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
