package volt

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"syscall"
	"testing"
)

// TestExitOnError: nil returns; -h (flag.ErrHelp, wrapped too) exits 0
// without a line; another error prints "PROGRAM: err" and exits with
// ExitCode's status (130 after a handled Ctrl-C, 99 after SIGUSR1, 1).
func TestExitOnError(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	help := fs.Parse([]string{"-h"})
	ctrlC := &InterruptedError{Signal: syscall.SIGINT, Checkpoint: "ckpt/last.ckpt"}
	for _, tc := range []struct {
		name string
		err  error
		code int
		exit bool
		line string
	}{
		{"nil", nil, 0, false, ""},
		{"-h", help, 0, true, ""},
		{"wrapped -h", fmt.Errorf("parsing: %w", help), 0, true, ""},
		{"error", errors.New("boom"), 1, true, "prog: boom\n"},
		{"Ctrl-C", fmt.Errorf("fit: %w", ctrlC), 130, true, "prog: fit: " + ctrlC.Error() + "\n"},
		{"requeue", &InterruptedError{Signal: syscall.SIGUSR1, Checkpoint: "c"}, RequeueExitCode, true, "prog: volt: Fit interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w bytes.Buffer
			code, exit := exitMessage(tc.err, "prog", &w)
			if code != tc.code || exit != tc.exit {
				t.Errorf("exitMessage(%v) = %d, %v; want %d, %v", tc.err, code, exit, tc.code, tc.exit)
			}
			if got := w.String(); tc.line == "" && got != "" || !bytes.HasPrefix(w.Bytes(), []byte(tc.line)) {
				t.Errorf("printed %q, want %q", got, tc.line)
			}
		})
	}
}
