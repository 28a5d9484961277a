package killtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/voltml/volt/internal/testutil"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/voltml/volt/checkpoint"
)

// Limits of the logged-rows kill test: trials of kill-and-restart, each
// killing at most killsPerTrial times, and no new kill after logBudget.
// userprog trains totalSteps optimization steps.
const (
	totalSteps    = 32
	logTrials     = 8
	killsPerTrial = 8
	logBudget     = 25 * time.Second
	logSeed       = 21
)

// userRun is a finished run of userprog: its version directory, with the
// rows of metrics.csv and the scalars of its event files.
type userRun struct {
	dir     string
	csv     [][]string
	scalars []scalar
}

// readUserRun reads the run that userprog's output names.
func readUserRun(t *testing.T, stdout []byte) userRun {
	t.Helper()
	line, ok := strings.CutPrefix(strings.TrimSpace(string(stdout)), "logged to ")
	dir, _, found := strings.Cut(line, " at global step")
	if !ok || !found {
		t.Fatalf("userprog printed %q, want \"logged to DIR at global step N\"", stdout)
	}
	return userRun{dir: dir, csv: testutil.ReadCSV(t, filepath.Join(dir, "metrics.csv")), scalars: eventScalars(t, dir)}
}

// TestSIGKILLKeepsEveryLoggedRowOnce runs userprog, a program written from
// the README (CSV and TensorBoard loggers in one version directory, a
// checkpoint every 2 steps), kills it with SIGKILL at random moments and
// restarts it with FromCheckpoint("last") until it finishes, in several
// trials. Each time the run's metrics.csv, and its event files read back
// with an independent decoder, hold every row and scalar of an
// uninterrupted run exactly once, with the same values, in one version
// directory; directories of attempts killed before their first checkpoint
// are the only others.
func TestSIGKILLKeepsEveryLoggedRowOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and repeatedly kills a training process; skipped in -short mode")
	}
	bin := buildProgram(t, "userprog")
	begin := time.Now()
	out, err := exec.Command(bin, "-root", t.TempDir()).Output()
	if err != nil {
		t.Fatalf("uninterrupted run: %v", err)
	}
	runTime := time.Since(begin)
	want := readUserRun(t, out)
	if len(want.csv) < 2 || len(want.scalars) == 0 {
		t.Fatalf("the uninterrupted run logged %d CSV records and %d scalars", len(want.csv), len(want.scalars))
	}

	var kills, dropped, deadRuns, rows, scalars int
	for trial := range logTrials {
		rng := rand.New(rand.NewPCG(logSeed, uint64(trial)))
		root := t.TempDir()
		var got userRun
		for killed := 0; ; {
			args := []string{"-root", root}
			if len(checkpoints(root)) > 0 {
				args = append(args, "-resume")
			}
			cmd := exec.Command(bin, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// Kill at a uniform moment of (most of) what is left of the
			// run, startup included.
			var timer <-chan time.Time
			if killed < killsPerTrial && time.Since(begin) < logBudget {
				left := max(runTime*time.Duration(totalSteps-newestCheckpointStep(t, root))/totalSteps*4/5, runTime/8)
				timer = time.After(time.Millisecond + time.Duration(rng.Int64N(int64(left))))
			}
			select {
			case err = <-done:
			case <-timer:
				_ = cmd.Process.Signal(syscall.SIGKILL)
				err = <-done
			}
			var exit *exec.ExitError
			if err == nil {
				got = readUserRun(t, stdout.Bytes())
				break
			}
			if !errors.As(err, &exit) || !exit.Sys().(syscall.WaitStatus).Signaled() {
				t.Fatalf("trial %d: after %d kills userprog %v failed: %v\n%s", trial, killed, args, err, stderr.String())
			}
			killed++
			kills++
			dropped += rowsAfterLastCheckpoint(t, root)
		}
		if !slices.EqualFunc(got.csv, want.csv, slices.Equal) {
			t.Errorf("trial %d: %s/metrics.csv differs from the uninterrupted run's:\n%s\nwant:\n%s", trial, got.dir, testutil.JoinCSV(got.csv), testutil.JoinCSV(want.csv))
		}
		if !slices.Equal(got.scalars, want.scalars) {
			t.Errorf("trial %d: the event files of %s hold %d scalars, differing from the uninterrupted run's %d:\n%v\nwant:\n%v",
				trial, got.dir, len(got.scalars), len(want.scalars), got.scalars, want.scalars)
		}
		versions, _ := filepath.Glob(filepath.Join(root, "volt_logs", "version_*"))
		for _, v := range versions {
			if v == got.dir {
				continue
			}
			if ckpts, _ := filepath.Glob(filepath.Join(v, "checkpoints", "*.ckpt")); len(ckpts) > 0 {
				t.Errorf("trial %d: %s, beside the run's %s, holds checkpoints %v: the run's history is in pieces", trial, v, got.dir, ckpts)
			}
			deadRuns++
		}
		rows += len(got.csv) - 1
		scalars += len(got.scalars)
	}
	t.Logf("%d trials, %d SIGKILLs in %s (seed %d): %d CSV rows and %d TensorBoard scalars checked, each once and equal to the uninterrupted run's; %d rows written after the checkpoint at the kill were dropped on resume; %d attempts killed before their first checkpoint left a directory of their own",
		logTrials, kills, time.Since(begin).Round(time.Millisecond), logSeed, rows, scalars, dropped, deadRuns)
	if kills == 0 {
		t.Error("userprog was never killed")
	}
}

// TestProgramsStartedAtOnceGetTheirOwnVersion starts three copies of
// userprog at once on one log root: each claims its own version directory
// and logs there the rows and checkpoints of a whole run, as if it had run
// alone (before, all three took version_0 and wrote into each other's
// files).
func TestProgramsStartedAtOnceGetTheirOwnVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three training processes")
	}
	bin := buildProgram(t, "userprog")
	out, err := exec.Command(bin, "-root", t.TempDir()).Output()
	if err != nil {
		t.Fatalf("a run alone: %v", err)
	}
	alone := readUserRun(t, out)
	root := t.TempDir()
	const programs = 3
	cmds := make([]*exec.Cmd, programs)
	outs := make([]bytes.Buffer, programs)
	for i := range cmds {
		cmds[i] = exec.Command(bin, "-root", root)
		cmds[i].Stdout = &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	dirs := map[string]bool{}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("program %d: %v", i, err)
		}
		got := readUserRun(t, outs[i].Bytes())
		if dirs[got.dir] {
			t.Errorf("program %d logged to %s, which another program also logged to", i, got.dir)
		}
		dirs[got.dir] = true
		if !slices.EqualFunc(got.csv, alone.csv, slices.Equal) || !slices.Equal(got.scalars, alone.scalars) {
			t.Errorf("program %d: the logs in %s differ from those of a run alone:\n%s", i, got.dir, testutil.JoinCSV(got.csv))
		}
		if _, err := checkpoint.Verify(filepath.Join(got.dir, "checkpoints", "last.ckpt")); err != nil {
			t.Errorf("program %d: %v", i, err)
		}
	}
	if versions, _ := filepath.Glob(filepath.Join(root, "volt_logs", "version_*")); len(versions) != programs {
		t.Errorf("version directories %v, want one per program", versions)
	}
}

// checkpoints returns the .ckpt files of every version directory of root.
func checkpoints(root string) []string {
	files, _ := filepath.Glob(filepath.Join(root, "volt_logs", "version_*", "checkpoints", "*.ckpt"))
	return files
}

// newestState is the part of the newest checkpoint's trainer state these
// tests read: its step, and where its first logger's rows ended.
type newestState struct {
	Progress struct {
		OptimizerSteps int64 `json:"optimizer_steps"`
	} `json:"progress"`
	Logs []struct {
		Position *struct {
			Dir    string `json:"dir"`
			Offset int    `json:"offset"`
		} `json:"position"`
	} `json:"logs"`
}

// readNewestState reads the trainer state of the newest checkpoint under
// root (ok false when there is none).
func readNewestState(t *testing.T, root string) (st newestState, ok bool) {
	t.Helper()
	newest := newestCheckpoint(root)
	if newest == "" {
		return st, false
	}
	h, err := checkpoint.ReadHeader(newest)
	if err != nil {
		t.Fatalf("%s after a kill: %v", newest, err)
	}
	if err := json.Unmarshal(h.State(), &st); err != nil {
		t.Fatalf("%s: state: %v", newest, err)
	}
	return st, true
}

// newestCheckpointStep returns the global step of the newest checkpoint
// under root, or 0 when there is none.
func newestCheckpointStep(t *testing.T, root string) int64 {
	st, _ := readNewestState(t, root)
	return st.Progress.OptimizerSteps
}

// newestCheckpoint returns the most recently written checkpoint under root
// (the one FromCheckpoint("last") resumes), or "".
func newestCheckpoint(root string) string {
	var newest string
	var newestTime time.Time
	for _, p := range checkpoints(root) {
		if info, err := os.Stat(p); err == nil && info.ModTime().After(newestTime) {
			newest, newestTime = p, info.ModTime()
		}
	}
	return newest
}

// rowsAfterLastCheckpoint returns how many complete rows the killed run's
// metrics.csv holds past the row count recorded in the newest checkpoint
// (the one FromCheckpoint("last") resumes): rows the resumed run drops.
// The count is a figure for the log, not a check.
func rowsAfterLastCheckpoint(t *testing.T, root string) int {
	st, ok := readNewestState(t, root)
	if !ok || len(st.Logs) == 0 || st.Logs[0].Position == nil {
		return 0 // no checkpoint, or it does not record the position
	}
	pos := st.Logs[0].Position
	b, _ := os.ReadFile(filepath.Join(pos.Dir, "metrics.csv"))
	return max(bytes.Count(b, []byte("\n"))-1-pos.Offset, 0)
}
