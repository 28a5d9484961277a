package volt_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
)

// TestSecondSignalSaysItStoppedWithoutSaving: a process stopped by a second
// SIGTERM says so in one line on stderr, instead of dying silently.
func TestSecondSignalSaysItStoppedWithoutSaving(t *testing.T) {
	if path := os.Getenv("VOLT_SECOND_SIGNAL_CHILD"); path != "" {
		cfg := quiet(volt.Config{MaxEpochs: 3, HandleSignals: true, SignalCheckpointPath: path,
			Callbacks: []volt.Callback{&signaller{at: 2, signals: []syscall.Signal{syscall.SIGTERM, syscall.SIGTERM},
				gap: 500 * time.Millisecond, linger: 10 * time.Second}}})
		tr := testutil.NewTrainer(t, cfg)
		err := tr.Fit(t.Context(), &boring{}, resumeData())
		t.Fatalf("Fit returned after two signals: %v", err)
	}
	path := filepath.Join(t.TempDir(), "never.ckpt")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSecondSignalSaysItStoppedWithoutSaving$")
	cmd.Env = append(os.Environ(), "VOLT_SECOND_SIGNAL_CHILD="+path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		t.Fatalf("child: %v\n%s", err, stderr.String())
	}
	want := "volt: second signal (terminated): stopping now, without saving a checkpoint"
	var lines int
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, "volt: second ") {
			lines++
			if l != want {
				t.Errorf("stderr line %q, want %q", l, want)
			}
		}
	}
	if lines != 1 {
		t.Errorf("%d lines about the second signal on stderr, want 1:\n%s", lines, stderr.String())
	}
}

// TestSameSignalTwiceAtOnceIsOneRequest: the same signal delivered twice
// within a moment (a scheduler signals every process of a job, and a
// Devices=N launcher passes its copy on to the ranks) is one request: the
// run saves its resumable checkpoint, instead of taking the copy as a
// second signal and stopping without saving.
func TestSameSignalTwiceAtOnceIsOneRequest(t *testing.T) {
	if path := os.Getenv("VOLT_SAME_SIGNAL_CHILD"); path != "" {
		cfg := quiet(volt.Config{MaxEpochs: 3, HandleSignals: true, SignalCheckpointPath: path,
			Callbacks: []volt.Callback{&signaller{at: 2, signals: []syscall.Signal{syscall.SIGTERM, syscall.SIGTERM}, gap: 20 * time.Millisecond}}})
		tr := testutil.NewTrainer(t, cfg)
		var interrupted *volt.InterruptedError
		if err := tr.Fit(t.Context(), &boring{}, resumeData()); !errors.As(err, &interrupted) || interrupted.Checkpoint == "" {
			t.Fatalf("Fit: %v, want an interruption with a checkpoint", err)
		}
		return
	}
	path := filepath.Join(t.TempDir(), "interrupted.ckpt")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSameSignalTwiceAtOnceIsOneRequest$")
	cmd.Env = append(os.Environ(), "VOLT_SAME_SIGNAL_CHILD="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "second signal") {
		t.Errorf("the copy was taken as a second signal:\n%s", out)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("no resumable checkpoint: %v", err)
	}
}
