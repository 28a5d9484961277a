package stderr

import (
	"fmt"
	"os"
	"testing"
)

// TestCapture: what f writes to os.Stderr comes back, and os.Stderr is
// restored afterwards.
func TestCapture(t *testing.T) {
	saved := os.Stderr
	got := Capture(t, func() { fmt.Fprint(os.Stderr, "epoch 0/0 step 40\n") })
	if got != "epoch 0/0 step 40\n" {
		t.Errorf("Capture = %q, want the line written", got)
	}
	if os.Stderr != saved {
		t.Errorf("os.Stderr is %v after Capture, want %v back", os.Stderr, saved)
	}
}

// errorRecorder records Errorf instead of failing the test.
type errorRecorder struct {
	testing.TB
	msg string
}

func (e *errorRecorder) Helper() {}

func (e *errorRecorder) Errorf(format string, args ...any) { e.msg = fmt.Sprintf(format, args...) }

// TestNoProgress: an epoch line on stderr fails the check, a model
// summary does not.
func TestNoProgress(t *testing.T) {
	for _, tc := range []struct {
		written string
		fails   bool
	}{
		{"  | Name | Type  | Params\n0 | gpt  | Scope | 15.8 K\n", false},
		{"  | Name | Type\nepoch 0/0 step 40 train_loss=0.4671 val_acc=0.9156\n", true},
		{"", false},
	} {
		e := &errorRecorder{TB: t}
		NoProgress(e, func() { fmt.Fprint(os.Stderr, tc.written) })
		if failed := e.msg != ""; failed != tc.fails {
			t.Errorf("NoProgress of %q failed: %v, want %v", tc.written, failed, tc.fails)
		}
	}
}
