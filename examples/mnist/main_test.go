package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// TestExampleTrainsAFewSteps runs the example end to end on real MNIST with a
// few optimization steps and checks what it prints.
func TestExampleTrainsAFewSteps(t *testing.T) {
	var out bytes.Buffer
	err := run([]string{"-epochs", "1", "-max-steps", "120", "-root", t.TempDir()}, &out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	value, ok := strings.CutPrefix(last, "test_acc=")
	if !ok {
		t.Fatalf("last line %q does not start with test_acc=", last)
	}
	acc, err := strconv.ParseFloat(value, 64)
	if err != nil {
		t.Fatal(err)
	}
	// 120 Adam steps already get well past chance (0.1).
	if acc < 0.8 {
		t.Errorf("test_acc=%v after 120 steps, want >= 0.8", acc)
	}
	if !strings.Contains(out.String(), "epoch 0: step 120") {
		t.Errorf("no epoch line in output:\n%s", out.String())
	}
}
