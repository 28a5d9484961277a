package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// asMainEnv set to 1 makes the test binary run main (see TestMain).
const asMainEnv = "FIRSTHOUR_AS_MAIN"

// program returns the command that runs this program with args in dir.
func program(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	return cmd
}

// exitCode returns err's exit status: 0 for nil, -1 when the program did
// not exit by itself.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("running the program: %v", err)
	return -1
}

// TestFirstHourCommandLine: -h prints the usage and exits 0; a bad flag
// prints its error once, and the usage, and exits 2 (Go's flag package), as
// a user at a shell expects; nothing is trained or written.
func TestFirstHourCommandLine(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string // in stderr, once
	}{
		{[]string{"-h"}, 0, "Usage of "},
		{[]string{"-epochs", "x"}, 2, `invalid value "x" for flag -epochs: want a whole number of epochs`},
		{[]string{"-epochs", "0"}, 2, `invalid value "0" for flag -epochs: 0 trains no epoch in Lightning (max_epochs=0)`},
		{[]string{"-bogus"}, 2, "flag provided but not defined: -bogus"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			var stderr bytes.Buffer
			cmd := program(dir, tc.args...)
			cmd.Stderr = &stderr
			if got := exitCode(t, cmd.Run()); got != tc.code {
				t.Errorf("exit status %d, want %d; stderr:\n%s", got, tc.code, stderr.String())
			}
			if n := strings.Count(stderr.String(), tc.want); n != 1 {
				t.Errorf("stderr has %q %d times, want once:\n%s", tc.want, n, stderr.String())
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("the program wrote %v", entries)
			}
		})
	}
}

// TestFirstHourCtrlC: SIGINT in the middle of Fit finishes the step, saves
// a resumable checkpoint, says where and how to resume, keeps the best
// checkpoint so far and the TensorBoard events, and exits 130 (128+SIGINT,
// as a shell reports a program killed by Ctrl-C).
func TestFirstHourCtrlC(t *testing.T) {
	dir := t.TempDir()
	cmd := program(dir, "-epochs", "1000", "-n", "20000")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	lines := bufio.NewScanner(stderr)
	for lines.Scan() { // the first finished epoch: Fit is under way
		log.WriteString(lines.Text() + "\n")
		if strings.HasPrefix(lines.Text(), "epoch 0 ") {
			break
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("no exit a minute after SIGINT; stderr:\n%s", log.String())
	}
	if got := exitCode(t, err); got != 130 {
		t.Errorf("exit status %d, want 130; stderr:\n%s", got, log.String())
	}
	version := filepath.Join(dir, "volt_logs", "version_0")
	interrupted := filepath.Join("volt_logs", "version_0", "checkpoints", "interrupted.ckpt")
	if !strings.Contains(log.String(), filepath.Base(os.Args[0])+": volt: Fit interrupted by interrupt at epoch ") ||
		!strings.Contains(log.String(), "resumable checkpoint saved to "+interrupted) {
		t.Errorf("stderr does not say that Fit was interrupted and where its checkpoint is:\n%s", log.String())
	}
	for _, pattern := range []string{"checkpoints/interrupted.ckpt", "checkpoints/epoch=*-val_loss=*.ckpt", "events.out.tfevents.*"} {
		if m, _ := filepath.Glob(filepath.Join(version, pattern)); len(m) != 1 {
			t.Errorf("%s in %s: %q, want one", pattern, version, m)
		}
	}
}

// TestFirstHourTwiceAtOnce: two runs started at once in one directory log
// and checkpoint into two version directories, and leave alone the files
// they did not write (an earlier run's version_0, a file of the user's).
func TestFirstHourTwiceAtOnce(t *testing.T) {
	dir := t.TempDir()
	theirs := []string{
		filepath.Join(dir, "notes.ckpt"),
		filepath.Join(dir, "volt_logs", "version_0", "checkpoints", "epoch=0-val_loss=0.0000.ckpt"),
		filepath.Join(dir, "volt_logs", "version_0", "checkpoints", "last.ckpt"),
	}
	for _, p := range theirs {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("not volt's"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var outs [2]bytes.Buffer
	var cmds [2]*exec.Cmd
	for i := range cmds {
		cmds[i] = program(dir, "-epochs", "4", "-n", "400")
		cmds[i].Stdout = &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	bests := map[string]bool{}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		best := bestLine.FindStringSubmatch(outs[i].String())
		if best == nil {
			t.Fatalf("run %d: no best checkpoint line in\n%s", i, outs[i].String())
		}
		bests[filepath.Dir(best[1])] = true
		if _, err := os.Stat(filepath.Join(dir, best[1])); err != nil {
			t.Errorf("run %d: best checkpoint: %v", i, err)
		}
	}
	if !bests[filepath.Join("volt_logs", "version_1", "checkpoints")] || !bests[filepath.Join("volt_logs", "version_2", "checkpoints")] {
		t.Errorf("best checkpoints in %v, want one in version_1 and one in version_2", bests)
	}
	for _, v := range []string{"version_1", "version_2"} {
		if m, _ := filepath.Glob(filepath.Join(dir, "volt_logs", v, "events.out.tfevents.*")); len(m) != 1 {
			t.Errorf("TensorBoard files in %s: %q, want one", v, m)
		}
	}
	for _, p := range theirs {
		if b, err := os.ReadFile(p); err != nil || string(b) != "not volt's" {
			t.Errorf("%s: %q, %v; want it untouched", p, b, err)
		}
	}
}

// TestFirstHourError: an error after the flags (here, a -dir under a file,
// where no log directory can be made) ends the program as an exception
// ends the Lightning script: "PROGRAM: error" on stderr, exit 1.
func TestFirstHourError(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := program(dir, "-epochs", "1", "-n", "100", "-dir", filepath.Join("file", "logs"))
	cmd.Stderr = &stderr
	if got := exitCode(t, cmd.Run()); got != 1 {
		t.Errorf("exit status %d, want 1; stderr:\n%s", got, stderr.String())
	}
	prefix := filepath.Base(os.Args[0]) + ": " // volt.ExitOnError's; NewTrainer's error lists its problems on the lines below
	if out := stderr.String(); !strings.HasPrefix(out, prefix) || !strings.Contains(out, filepath.Join("file", "logs", "volt_logs")+": not a directory") {
		t.Errorf("stderr is\n%s\nwant %q first and the error naming the path", out, prefix)
	}
}
