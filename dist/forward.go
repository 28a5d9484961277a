package dist

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// ForwardedSignals are the signals RunForwardingSignals passes on to the
// ranks: the ones a volt trainer handles (Config.HandleSignals).
var ForwardedSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1}

// RunForwardingSignals starts cmd, an mpirun command (RelaunchCommand), and
// waits for it. A SIGTERM, SIGINT or SIGUSR1 that this process receives
// meanwhile is sent on to the job's ranks, as it is, so that they can save
// a checkpoint and end as a single process would (Config.HandleSignals);
// the job's exit status is then the ranks'. told, when not nil, is called
// with each signal and the number of ranks it reached.
//
// Why not signal mpirun: OpenMPI 4's mpirun answers SIGTERM and SIGINT by
// aborting the job (SIGCONT, 1 s, SIGTERM, 1 s, SIGKILL to every rank,
// odls_base_sigkill_timeout), which leaves a rank one second to save
// before a second SIGTERM, and SIGINT reaches the ranks as SIGTERM; it
// refuses SIGTERM and SIGINT in ess_base_forward_signals. So mpirun runs
// in a process group of its own (a Ctrl-C in a terminal reaches this
// process only, not mpirun), and the ranks, mpirun's children running the
// same program, get the signal directly. When none is found (the job is
// still starting, or /proc is missing) mpirun gets it. A signal this
// process was started ignoring (nohup, a shell's background job) stays
// ignored. On Linux, should this process die without passing a signal on
// (SIGKILL, SIGHUP), mpirun gets SIGTERM and ends the job rather than
// leave it running as an orphan.
func RunForwardingSignals(cmd *exec.Cmd, told func(sig os.Signal, ranks int)) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	// The parent-death signal follows the thread that started mpirun:
	// keep this goroutine on it until mpirun has ended.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	setParentDeathSignal(cmd.SysProcAttr, syscall.SIGTERM)
	signals := make(chan os.Signal, 4)
	for _, s := range ForwardedSignals {
		if !signal.Ignored(s) {
			signal.Notify(signals, s)
		}
	}
	defer signal.Stop(signals)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case err := <-done:
			return err
		case s := <-signals:
			ranks := forwardToRanks(cmd.Process.Pid, s)
			if ranks == 0 {
				_ = cmd.Process.Signal(s)
			}
			if told != nil {
				told(s, ranks)
			}
		}
	}
}

// forwardToRanks sends sig to every child of the mpirun process launcher
// that runs this program, and returns how many it reached.
func forwardToRanks(launcher int, sig os.Signal) int {
	n := 0
	for _, pid := range rankPIDs(launcher) {
		if p, err := os.FindProcess(pid); err == nil && p.Signal(sig) == nil {
			n++
		}
	}
	return n
}

// rankPIDs returns the children of process parent that run this
// process's executable (the ranks mpirun started on this machine), read
// from /proc; none where /proc is missing.
func rankPIDs(parent int) []int {
	self, err := os.Executable()
	if err != nil {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentPID(pid); !ok || ppid != parent {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == self {
			pids = append(pids, pid)
		}
	}
	return pids
}

// parentPID reads a process's parent from /proc/<pid>/stat.
func parentPID(pid int) (int, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	return statParentPID(string(raw))
}

// statParentPID returns the parent pid of a /proc/<pid>/stat line, whose
// fourth field follows the command name in parentheses (which may itself
// hold spaces and parentheses).
func statParentPID(stat string) (int, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(stat[i+1:])
	if len(fields) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	return ppid, err == nil
}
