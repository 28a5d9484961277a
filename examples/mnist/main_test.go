package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
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
		absent     string // text stdout must not have ("" none)
	}{
		{"progress", nil, "test_loss=", "epoch 0 step 120 train_loss=", ""},
		// MaxSteps ends the epoch before its validation: no val_ values to print.
		{"progress=false", []string{"-progress=false"}, "epoch 0: step 120 train_loss=", "", "val_loss="},
		{"timing", []string{"-timing"}, "test_loss=", "timing: first_step_s=", ""},
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
			checkConfusion(t, out.String(), acc)
			if tc.absent != "" && strings.Contains(out.String(), tc.absent) {
				t.Errorf("stdout has %q:\n%s", tc.absent, out.String())
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

// checkConfusion finds the confusion matrix in the example's output and
// checks it against the test set: 10 rows of 10 counts that add up to
// MNIST's 10000 test images, whose diagonal over the total is the accuracy
// printed.
func checkConfusion(t *testing.T, out string, acc float64) {
	t.Helper()
	_, after, ok := strings.Cut(out, "confusion matrix (rows: true digit, columns: predicted digit):\n")
	if !ok {
		t.Fatalf("no confusion matrix in the output:\n%s", out)
	}
	lines := strings.Split(after, "\n")
	if len(lines) < 11 {
		t.Fatalf("confusion matrix cut short:\n%s", after)
	}
	var total, diagonal int
	for i, line := range lines[1:11] {
		label, row, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(label) != fmt.Sprint(i) {
			t.Fatalf("row %d of the confusion matrix is %q", i, line)
		}
		fields := strings.Fields(row)
		if len(fields) != 10 {
			t.Fatalf("row %d has %d counts, want 10: %q", i, len(fields), line)
		}
		for j, f := range fields {
			var c int
			if _, err := fmt.Sscan(f, &c); err != nil {
				t.Fatalf("row %d, column %d: %q is no count", i, j, f)
			}
			total += c
			if i == j {
				diagonal += c
			}
		}
	}
	if total != 10000 {
		t.Errorf("the confusion matrix counts %d images, MNIST's test set has 10000", total)
	}
	if got := float64(diagonal) / float64(total); math.Abs(got-acc) > 1e-4 {
		t.Errorf("the confusion matrix's accuracy is %v, test_acc=%v", got, acc)
	}
}

// TestEpochsFlagRefusesWhatVoltWouldMisread: -epochs 0 trained volt's
// default, 1000 epochs, where Lightning's max_epochs=0 trains none: it is
// refused, naming the flag and what is valid, as -5 is.
func TestEpochsFlagRefusesWhatVoltWouldMisread(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"-epochs", "0"}, `invalid value "0" for flag -epochs: 0 trains no epoch in Lightning (max_epochs=0), but volt reads 0 as its default (1000 epochs); give a positive number, or -1 for no limit`},
		{[]string{"-epochs", "-5", "-max-steps", "3"}, `invalid value "-5" for flag -epochs: want a positive number of epochs, or -1 for no limit`},
	} {
		err := run(append(tc.flags, "-root", t.TempDir()), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%v) = %v, want an error containing %q", tc.flags, err, tc.want)
		}
	}
}
