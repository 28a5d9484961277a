package killtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/voltml/volt/checkpoint"
)

// Limits of the kill loop: it stops killing after maxKills kills or budget
// of wall time and lets the trainee finish.
const (
	maxKills = 60
	budget   = 30 * time.Second
	seed     = 2024
)

// TestSIGKILLResumesBitwise kills the trainee with SIGKILL at random moments
// (many of them inside a checkpoint save), restarts it each time (it resumes
// from last.ckpt), and checks that it ends with the weights of a run that was
// never interrupted.
func TestSIGKILLResumesBitwise(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and repeatedly kills a training process; skipped in -short mode")
	}
	bin := buildTrainee(t)

	refDir := t.TempDir()
	ref := filepath.Join(refDir, "weights")
	if out, err := trainee(bin, refDir, ref).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	want, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	got := filepath.Join(t.TempDir(), "weights")
	rng := rand.New(rand.NewPCG(seed, 0))
	start := time.Now()
	window := 75 * time.Millisecond // kill after 5 ms + [0, window)
	var kills, inSave, inCopy, stalled int
	seen := map[string]bool{}
	lastStep := int64(-1)
	for finished := false; !finished; {
		cmd := trainee(bin, dir, got)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var timer <-chan time.Time
		if kills < maxKills && time.Since(start) < budget {
			timer = time.After(5*time.Millisecond + time.Duration(rng.Int64N(int64(window))))
		}
		select {
		case err = <-done:
		case <-timer:
			_ = cmd.Process.Signal(syscall.SIGKILL)
			err = <-done
		}
		var exit *exec.ExitError
		switch {
		case err == nil:
			finished = true
			continue
		case errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signaled():
			kills++
		default:
			t.Fatalf("after %d kills the trainee failed: %v\n%s", kills, err, stderr.String())
		}
		// A kill between a temporary file's creation and its rename leaves
		// it behind: the kill hit a save (or the copy to last.ckpt).
		tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
		for _, p := range tmps {
			if seen[p] {
				continue
			}
			seen[p] = true
			if strings.HasPrefix(filepath.Base(p), ".last.ckpt.") {
				inCopy++
			} else {
				inSave++
			}
		}
		// last.ckpt, if any, is always whole: its checksum verifies.
		step := lastCheckpointStep(t, filepath.Join(dir, "last.ckpt"))
		if step == lastStep {
			// No progress: killed before the trainee got going; widen the
			// window after a few in a row (a slow machine).
			if stalled++; stalled%5 == 0 {
				window *= 2
			}
		} else {
			stalled = 0
		}
		lastStep = step
	}
	t.Logf("%d SIGKILLs in %s (seed %d): %d inside a checkpoint save, %d inside the copy to last.ckpt (leftover temporary files, never loaded); final kill window %s",
		kills, time.Since(start).Round(time.Millisecond), seed, inSave, inCopy, window)
	if kills == 0 {
		t.Error("the trainee was never killed")
	}
	gotW, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotW, want) {
		t.Errorf("after %d kills and resumes the final weights differ from the uninterrupted run's", kills)
	}
	if step := lastCheckpointStep(t, filepath.Join(dir, "last.ckpt")); step != 32 {
		t.Errorf("last.ckpt is at global step %d, want 32", step)
	}
}

// buildTrainee compiles the trainee command into a temporary directory.
func buildTrainee(t *testing.T) string {
	t.Helper()
	return buildProgram(t, "trainee")
}

// buildProgram compiles the command in directory pkg (of this package)
// into a temporary directory.
func buildProgram(t *testing.T, pkg string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is not available to build %s", pkg)
	}
	bin := filepath.Join(t.TempDir(), pkg)
	cmd := exec.Command(goBin, "build", "-o", bin, "./"+pkg)
	cmd.Env = append(os.Environ(), "GOEXPERIMENT=simd")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// trainee returns the command that trains (or resumes) in dir and writes
// the final weights to out.
func trainee(bin, dir, out string) *exec.Cmd {
	return exec.Command(bin, "-dir", dir, "-out", out)
}

// lastCheckpointStep returns the global step of the checkpoint at path
// after verifying its checksum, or -1 when there is none yet.
func lastCheckpointStep(t *testing.T, path string) int64 {
	t.Helper()
	h, err := checkpoint.Verify(path)
	if errors.Is(err, os.ErrNotExist) {
		return -1
	}
	if err != nil {
		t.Fatalf("%s does not verify after a kill: %v", path, err)
	}
	var st struct {
		Progress struct {
			OptimizerSteps int64 `json:"optimizer_steps"`
		} `json:"progress"`
	}
	if err := json.Unmarshal(h.State(), &st); err != nil {
		t.Fatalf("%s: state: %v", path, err)
	}
	return st.Progress.OptimizerSteps
}
