package volt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/voltml/volt/dist"
)

// exitProcess ends the launching process with the job's exit status.
var exitProcess = os.Exit

// relaunch runs this program again as devices MPI ranks under mpirun
// (Lightning's subprocess launcher), waits for the job, and exits with its
// status: the program's code after NewTrainer ran in the ranks, so the
// launching process has nothing left to do. A SIGTERM, SIGINT or SIGUSR1
// it receives meanwhile goes on to the ranks (dist.RunForwardingSignals),
// which with Config.HandleSignals save their resumable checkpoint and end
// as one process would; the launcher then exits with their status (143,
// 130 or RequeueExitCode). It returns an error, without
// exiting, when the job cannot start (a binary built without -tags mpi, no
// mpirun).
func relaunch(devices int) error {
	cmd, err := dist.RelaunchCommand(context.Background(), devices)
	if err != nil {
		return fmt.Errorf("Config.Devices=%d: %w", devices, err)
	}
	fmt.Fprintf(os.Stderr, "volt: Config.Devices=%d: running this program as %d MPI ranks: %s\n",
		devices, devices, strings.Join(cmd.Args, " "))
	err = dist.RunForwardingSignals(cmd, func(s os.Signal, ranks int) {
		if ranks == 0 {
			fmt.Fprintf(os.Stderr, "volt: %v: no rank found yet; passed to mpirun, which ends the job\n", s)
			return
		}
		fmt.Fprintf(os.Stderr, "volt: %v: passed to the %d ranks; waiting for them to end\n", s, ranks)
	})
	var exit *exec.ExitError
	switch {
	case err == nil:
		exitProcess(0)
	case errors.As(err, &exit):
		exitProcess(jobExitCode(exit))
	default:
		return fmt.Errorf("Config.Devices=%d: running mpirun: %w", devices, err)
	}
	return nil
}

// jobExitCode is the status the launcher exits with for a failed job:
// mpirun's (the first failing rank's), or 128+signal when mpirun itself
// was killed by a signal, as a shell reports it.
func jobExitCode(exit *exec.ExitError) int {
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return max(exit.ExitCode(), 1)
}
