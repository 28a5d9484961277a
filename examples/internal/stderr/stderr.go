// Package stderr checks what a run writes to the process's stderr, for
// the examples' tests: a run given -progress=false must show no progress
// there (volt's default progress bar writes to os.Stderr, not to the
// run's errOut). [NoProgress] is the check, [Capture] what it reads.
package stderr

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Capture runs f with os.Stderr pointing at a temporary file and returns
// what f wrote to it. Tests that call it must not run in parallel.
func Capture(t testing.TB, f func()) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stderr")
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = file
	defer func() { os.Stderr = saved }()
	f()
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// NoProgress runs f (a run given -progress=false) under [Capture] and
// fails t if it wrote a progress line to stderr: "epoch …", as a progress
// bar writes where stderr is not a terminal. The trainer's model summary
// may stand there; it is not progress.
func NoProgress(t testing.TB, f func()) {
	t.Helper()
	written := Capture(t, f)
	for _, line := range strings.Split(written, "\n") {
		if strings.HasPrefix(line, "epoch ") {
			t.Errorf("-progress=false, yet the run wrote progress to stderr:\n%s", written)
			return
		}
	}
}
