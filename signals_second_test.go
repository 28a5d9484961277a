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
)

// TestSecondSignalSaysItStoppedWithoutSaving: a process stopped by a second
// SIGTERM says so in one line on stderr, instead of dying silently.
func TestSecondSignalSaysItStoppedWithoutSaving(t *testing.T) {
	if path := os.Getenv("VOLT_SECOND_SIGNAL_CHILD"); path != "" {
		cfg := quiet(volt.Config{MaxEpochs: 3, HandleSignals: true, SignalCheckpointPath: path,
			Callbacks: []volt.Callback{&signaller{at: 2, signals: []syscall.Signal{syscall.SIGTERM, syscall.SIGTERM},
				gap: 500 * time.Millisecond, linger: 10 * time.Second}}})
		tr, _ := volt.NewTrainer(cfg)
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
