package resumeprop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/voltml/volt/checkpoint"
	"github.com/voltml/volt/dist/mpitest"
)

// childEnv holds, as a JSON array, the arguments of resumeprop.Child when
// the test binary is re-executed as a child training process.
const childEnv = "VOLT_RESUMEPROP_CHILD"

// TestMain runs Child instead of the tests in a re-executed test binary.
func TestMain(m *testing.M) {
	if raw := os.Getenv(childEnv); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", childEnv, err)
			os.Exit(2)
		}
		os.Exit(Child(args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// outcome is how one part of an interrupted run ended.
type outcome int

const (
	finished outcome = iota // Fit returned without error: the crash never came
	crashed                 // the planned error or panic ended it
	killed                  // SIGKILL ended it
)

// part is one process (or one in-process Fit) of an interrupted run:
// fresh or resumed, with crash (nil: none).
type part struct {
	resume bool
	crash  int // index into the scenario's crashes, -1 for none
}

// partRunner runs one part of a scenario under root.
type partRunner interface {
	run(t *testing.T, sc Scenario, root string, p part) outcome
}

// inProcess runs parts as Fits of new trainers in this process.
type inProcess struct{}

func (inProcess) run(t *testing.T, sc Scenario, root string, p part) outcome {
	t.Helper()
	o := Options{Resume: p.resume}
	if p.crash >= 0 {
		o.Crash = &sc.Crashes[p.crash]
	}
	_, err := Run(t.Context(), sc, root, o)
	switch {
	case err == nil:
		return finished
	case strings.Contains(err.Error(), ErrPlanned):
		return crashed
	}
	t.Fatalf("%s\nFit failed unplanned: %v", rerun(sc), err)
	return finished
}

// childProcess runs each part in a re-executed test binary (1 rank) or an
// mpirun job of the trainee command (2 ranks), killing it with SIGKILL
// where the part's crash says.
type childProcess struct {
	trainee string // the -tags mpi trainee binary, for 2 ranks
}

func (c childProcess) run(t *testing.T, sc Scenario, root string, p part) outcome {
	t.Helper()
	scPath := filepath.Join(root, "scenario.json")
	if err := os.WriteFile(scPath, []byte(sc.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-scenario", scPath, "-root", root, "-crash", strconv.Itoa(p.crash)}
	if p.resume {
		args = append(args, "-resume")
	}
	var kill *Crash
	if p.crash >= 0 && sc.Crashes[p.crash].Kind == "sigkill" {
		kill = &sc.Crashes[p.crash]
		args = append(args, "-announce", "-pause", "2ms")
	}
	if sc.Ranks > 1 {
		return c.mpiJob(t, sc, args, kill)
	}
	return c.single(t, sc, args, kill)
}

// watcher kills the process of a STEP line once the crash's batch is
// reached.
type watcher struct {
	kill  *Crash
	fired bool
	err   error
}

func (w *watcher) line(s string) {
	if w.kill == nil || w.fired {
		return
	}
	var rank, pid int
	var n int64
	if _, err := fmt.Sscanf(s, "STEP %d %d %d", &rank, &n, &pid); err != nil || rank != w.kill.Rank || n < w.kill.AtBatch {
		return
	}
	delay := w.kill.DelayMicros
	if s := os.Getenv("VOLT_RESUME_DELAY_US"); s != "" {
		delay, _ = strconv.Atoi(s)
	}
	time.Sleep(time.Duration(delay) * time.Microsecond)
	w.fired = true
	w.err = syscall.Kill(pid, syscall.SIGKILL)
}

func (c childProcess) single(t *testing.T, sc Scenario, args []string, kill *Crash) outcome {
	t.Helper()
	env, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(env))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &watcher{kill: kill}
	sc2 := bufio.NewScanner(pipe)
	for sc2.Scan() {
		w.line(sc2.Text())
	}
	err = cmd.Wait()
	if w.err != nil {
		t.Fatalf("%s\nkill: %v", rerun(sc), w.err)
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return finished
	case errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signaled() && w.fired:
		return killed
	case strings.Contains(stderr.String(), ErrPlanned):
		return crashed
	}
	t.Fatalf("%s\nchild %v failed unplanned: %v\n%s", rerun(sc), args, err, stderr.String())
	return finished
}

func (c childProcess) mpiJob(t *testing.T, sc Scenario, args []string, kill *Crash) outcome {
	t.Helper()
	w := &watcher{kill: kill}
	res := mpitest.RunWatching(t, time.Minute, sc.Ranks, c.trainee, args, w.line)
	if w.err != nil {
		t.Fatalf("%s\nkill: %v", rerun(sc), w.err)
	}
	switch {
	case res.TimedOut:
		t.Fatalf("%s\nmpirun %v timed out\n%s%s", rerun(sc), args, res.Stdout, res.Stderr)
	case res.Err == nil:
		return finished
	case w.fired:
		return killed
	case strings.Contains(res.Stdout+res.Stderr, ErrPlanned):
		return crashed
	}
	t.Fatalf("%s\nmpirun %v failed unplanned: %v\n%s%s", rerun(sc), args, res.Err, res.Stdout, res.Stderr)
	return finished
}

// hasCheckpoint reports whether the run under root saved a checkpoint
// that FromCheckpoint("last") can find.
func hasCheckpoint(root string) bool {
	for _, pattern := range []string{
		filepath.Join(root, StepCkptDir, "*.ckpt"),
		filepath.Join(root, EpochCkptDir, "*.ckpt"),
		filepath.Join(root, LogsName, "version_*", "checkpoints", "*.ckpt"),
	} {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return true
		}
	}
	return false
}

// rerun says how to run the scenario again, with its configuration.
func rerun(sc Scenario) string {
	return fmt.Sprintf("scenario %s\nrerun: VOLT_RESUME_GROUP=%s VOLT_RESUME_SEED=%d VOLT_RESUME_PLAN=%d go test -count=1 -run TestResumeProperty -v ./internal/resumeprop/",
		sc, sc.Group, sc.Seed, sc.Plan)
}

// savedAt is where a checkpoint that a part resumed from was taken.
type savedAt struct {
	File  string // relative to the run's root
	Stage string // progress.stage: the hook boundary ("train_batch_end", "validate_end", …)
	Batch int    // resume.batch: training batches of the epoch processed
	Epoch int    // resume.epoch
}

// resumePoint returns where the checkpoint FromCheckpoint("last") picks
// (the newest file by modification time) was taken.
func resumePoint(t *testing.T, root string) savedAt {
	t.Helper()
	var newest string
	var newestTime time.Time
	for _, pattern := range []string{
		filepath.Join(root, StepCkptDir, "*.ckpt"),
		filepath.Join(root, EpochCkptDir, "*.ckpt"),
		filepath.Join(root, LogsName, "version_*", "checkpoints", "*.ckpt"),
	} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			if info, err := os.Stat(f); err == nil && info.ModTime().After(newestTime) {
				newest, newestTime = f, info.ModTime()
			}
		}
	}
	h, err := checkpoint.ReadHeader(newest)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Progress struct {
			Stage string `json:"stage"`
		} `json:"progress"`
		Resume struct {
			Epoch int `json:"epoch"`
			Batch int `json:"batch"`
		} `json:"resume"`
	}
	if err := json.Unmarshal(h.State(), &st); err != nil {
		t.Fatalf("%s: %v", newest, err)
	}
	rel, _ := filepath.Rel(root, newest)
	return savedAt{File: rel, Stage: st.Progress.Stage, Batch: st.Resume.Batch, Epoch: st.Resume.Epoch}
}
