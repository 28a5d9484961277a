package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestExampleTrainsAFewSteps runs the example end to end on real MNIST with a
// few optimization steps and checks what it prints: the results on stdout,
// the progress (plain lines here, a bytes.Buffer being no terminal) on
// stderr, with -progress=false an epoch line on stdout instead, and with
// -timing the timing line on stderr.
func TestExampleTrainsAFewSteps(t *testing.T) {
	for _, tc := range []struct {
		name       string
		flags      []string
		wantStdout string // a line start stdout must have
		wantStderr string // a line start stderr must have ("" none)
	}{
		{"progress", nil, "test_loss=", "epoch 0/0 step 120 train_loss="},
		{"progress=false", []string{"-progress=false"}, "epoch 0: step 120 train_loss=", ""},
		{"timing", []string{"-timing"}, "test_loss=", "timing: first_step_s="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append([]string{"-epochs", "1", "-max-steps", "120", "-root", t.TempDir()}, tc.flags...)
			if err := run(args, &out, &errOut); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			last := lines[len(lines)-1]
			var acc, f1 float64
			if _, err := fmt.Sscanf(last, "test_acc=%g test_f1=%g", &acc, &f1); err != nil {
				t.Fatalf("last line %q is not test_acc=… test_f1=…: %v", last, err)
			}
			// 120 Adam steps already get well past chance (0.1).
			if acc < 0.8 {
				t.Errorf("test_acc=%v after 120 steps, want >= 0.8", acc)
			}
			// Macro F1 over the whole test set: past chance too, and not
			// the accuracy under another name.
			if f1 < 0.7 || f1 > 1 || f1 == acc {
				t.Errorf("test_f1=%v after 120 steps (test_acc=%v), want in [0.7, 1] and not the accuracy", f1, acc)
			}
			if !hasLinePrefix(out.String(), tc.wantStdout) {
				t.Errorf("no line %q… on stdout:\n%s", tc.wantStdout, out.String())
			}
			if tc.wantStderr != "" && !hasLinePrefix(errOut.String(), tc.wantStderr) {
				t.Errorf("no line %q… on stderr:\n%s", tc.wantStderr, errOut.String())
			}
			if tc.wantStderr == "" && strings.Contains(errOut.String(), "epoch") {
				t.Errorf("progress on stderr with -progress=false:\n%s", errOut.String())
			}
		})
	}
}

// hasLinePrefix reports whether a line of s starts with prefix.
func hasLinePrefix(s, prefix string) bool {
	for line := range strings.Lines(s) {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return false
}
