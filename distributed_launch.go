package volt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/voltml/volt/dist"
)

// exitProcess ends the launching process with the job's exit status.
var exitProcess = os.Exit

// relaunch runs this program again as devices MPI ranks under mpirun
// (Lightning's subprocess launcher), waits for the job, and exits with its
// status: the program's code after NewTrainer ran in the ranks, so the
// launching process has nothing left to do. It returns an error, without
// exiting, when the job cannot start (a binary built without -tags mpi, no
// mpirun).
func relaunch(devices int) error {
	cmd, err := dist.RelaunchCommand(context.Background(), devices)
	if err != nil {
		return fmt.Errorf("Config.Devices=%d: %w", devices, err)
	}
	fmt.Fprintf(os.Stderr, "volt: Config.Devices=%d: running this program as %d MPI ranks: %s\n",
		devices, devices, strings.Join(cmd.Args, " "))
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		exitProcess(0)
	case errors.As(err, &exit):
		exitProcess(max(exit.ExitCode(), 1))
	default:
		return fmt.Errorf("Config.Devices=%d: running mpirun: %w", devices, err)
	}
	return nil
}
