package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/voltml/volt/dist"
)

// testDevicesLauncherForwardsSignals: SIGTERM, SIGINT or SIGUSR1 to a
// Devices=2 program started as one process (the launcher that runs mpirun)
// reaches the ranks, which save one resumable checkpoint (HandleSignals)
// and end; the launcher exits with their status (143, 130 or 99,
// volt.ExitCode), no rank is left running, and the checkpoint resumes on 2
// ranks. After a SIGKILL, which the launcher cannot pass on, no rank is
// left running either.
func testDevicesLauncherForwardsSignals(t *testing.T, bin string) {
	for _, tc := range []struct {
		name     string
		sig      syscall.Signal
		group    bool // to the launcher's process group, as a terminal's Ctrl-C
		exitCode int
		says     string
	}{
		{"SIGTERM", syscall.SIGTERM, false, 143, "interrupted by terminated"},
		{"SIGINT", syscall.SIGINT, false, 130, "interrupted by interrupt"},
		{"ctrl-c", syscall.SIGINT, true, 130, "interrupted by interrupt"},
		{"SIGUSR1", syscall.SIGUSR1, false, 99, "interrupted by user defined signal 1"}, // SLURM's requeue: volt.RequeueExitCode
		// The launcher cannot pass SIGKILL on: mpirun gets SIGTERM from the
		// kernel (parent-death signal) and ends the job.
		{"SIGKILL", syscall.SIGKILL, false, 137, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dataPath, _ := filepath.Abs(filepath.Join("testdata", "data.json"))
			ckpt, out := t.TempDir(), t.TempDir()
			code, pids, stderr := runLauncherSignalled(t, bin, tc.sig, tc.group,
				"-data", dataPath, "-devices", "2", "-epochs", "100000", "-slow", "10ms",
				"-handle-signals", "-ckpt", ckpt, "-out", out)
			for _, pid := range pids {
				if alive(pid) {
					t.Errorf("rank pid %d still runs after the launcher exited (an orphan)", pid)
				}
			}
			if code != tc.exitCode {
				t.Fatalf("launcher exit status %d after %v, want %d\n%s", code, tc.sig, tc.exitCode, stderr)
			}
			if tc.says == "" {
				return
			}
			for r := range 2 {
				if _, err := os.Stat(filepath.Join(out, "rank"+strconv.Itoa(r)+".json")); err != nil {
					t.Fatalf("rank %d wrote no result: %v\n%s", r, err, stderr)
				}
			}
			res := readResults(t, out, 2)
			for _, r := range res {
				if !strings.Contains(r.Err, tc.says) {
					t.Errorf("rank %d ended with %q, want %q", r.Rank, r.Err, tc.says)
				}
				if r.GlobalStep != res[0].GlobalStep {
					t.Errorf("rank %d stopped at step %d, rank 0 at %d", r.Rank, r.GlobalStep, res[0].GlobalStep)
				}
			}
			interrupted := filepath.Join(ckpt, "interrupted.ckpt")
			if _, err := os.Stat(interrupted); err != nil {
				t.Fatalf("no resumable checkpoint: %v\n%s", err, stderr)
			}
			epochs := strconv.Itoa(res[0].Epoch + 2)
			for _, r := range runRanks(t, bin, 2, "-epochs", epochs, "-resume", interrupted) {
				if r.Err != "" || r.GlobalStep <= res[0].GlobalStep || r.Epoch != res[0].Epoch+2 {
					t.Errorf("rank %d resumed from step %d to step %d, epoch %d (%q); want epoch %s, no error",
						r.Rank, res[0].GlobalStep, r.GlobalStep, r.Epoch, r.Err, epochs)
				}
			}
		})
	}
}

// runLauncherSignalled starts bin args as one plain process (it relaunches
// itself under mpirun) in a process group of its own, sends it sig (to the
// whole group when group is true) once both ranks are training, and
// returns its exit status, the ranks' pids and its stderr. It kills
// whatever rank outlives the test.
func runLauncherSignalled(t *testing.T, bin string, sig syscall.Signal, group bool, args ...string) (int, []int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), dist.LaunchEnv()...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 2 * time.Second // an orphaned mpirun holds stderr open
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pidLine := regexp.MustCompile(`^PID rank=\d+ pid=(\d+)$`)
	found := make(chan int, 2)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := pidLine.FindStringSubmatch(sc.Text()); m != nil {
				pid, _ := strconv.Atoi(m[1])
				found <- pid
			}
		}
	}()
	var pids []int
	t.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	for len(pids) < 2 {
		select {
		case pid := <-found:
			pids = append(pids, pid)
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("the ranks did not start training in 30 s:\n%s", stderr.String())
		}
	}
	time.Sleep(300 * time.Millisecond) // inside training
	target := cmd.Process.Pid
	if group {
		target = -target
	}
	if err := syscall.Kill(target, sig); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, pids, stderr.String()
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), pids, stderr.String()
		}
		return exit.ExitCode(), pids, stderr.String()
	}
	t.Fatalf("waiting for the launcher: %v", err)
	return 0, nil, ""
}

// alive reports whether process pid exists (and is not a zombie awaiting
// its parent), polling for up to 5 s for it to end (mpirun ending a job
// takes 2 s: SIGCONT, 1 s, SIGTERM, 1 s, SIGKILL).
func alive(pid int) bool {
	for range 50 {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(raw), ") Z ") {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}
