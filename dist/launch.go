package dist

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
)

// LaunchEnv returns the environment variables MPIRunCommand adds for
// OpenMPI's mpirun: running as root is allowed (CI runs as root; OpenMPI
// refuses it otherwise) and more ranks than cores are allowed (-np 2 on a
// machine whose cores OpenMPI counts as one would fail with "not enough
// slots").
func LaunchEnv() []string {
	env := []string{"OMPI_MCA_rmaps_base_oversubscribe=1"}
	if os.Geteuid() == 0 {
		env = append(env, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	}
	return env
}

// MPIRunCommand returns the command `mpirun -np ranks program args...` with
// this process's environment plus LaunchEnv. program must be an MPI binary
// (built with -tags mpi). It fails when ranks < 1 or mpirun is not in PATH.
func MPIRunCommand(ctx context.Context, ranks int, program string, args ...string) (*exec.Cmd, error) {
	if ranks < 1 {
		return nil, fmt.Errorf("dist.MPIRunCommand: ranks must be >= 1, got %d", ranks)
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		return nil, errors.New("dist.MPIRunCommand: mpirun is not in PATH; install OpenMPI " +
			"(Debian: apt-get install openmpi-bin libopenmpi-dev)")
	}
	cmd := exec.CommandContext(ctx, mpirun, append([]string{"-np", strconv.Itoa(ranks), program}, args...)...)
	cmd.Env = append(os.Environ(), LaunchEnv()...)
	return cmd, nil
}

// RelaunchCommand returns the command that runs this same program, with the
// same arguments, as ranks MPI ranks: what a trainer configured for N
// devices but started as one plain process runs (Lightning's subprocess
// launcher). It fails with ErrNotBuilt in a build without -tags mpi, and
// when this process was itself started by an MPI launcher (it would launch
// recursively).
func RelaunchCommand(ctx context.Context, ranks int) (*exec.Cmd, error) {
	if !Built {
		return nil, fmt.Errorf("dist.RelaunchCommand: %d ranks requested but this binary was %w", ranks, ErrNotBuilt)
	}
	if launched, why := LaunchedByMPI(); launched {
		return nil, fmt.Errorf("dist.RelaunchCommand: already running under an MPI launcher (%s)", why)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("dist.RelaunchCommand: locating this program: %w", err)
	}
	cmd, err := MPIRunCommand(ctx, ranks, self, os.Args[1:]...)
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd, nil
}
