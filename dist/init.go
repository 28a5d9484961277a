package dist

import (
	"fmt"
	"os"
)

// launcherVars are the environment variables an MPI launcher sets in the
// processes it starts: OpenMPI's mpirun, PMIx (srun --mpi=pmix, OpenMPI 4)
// and MPICH's hydra.
var launcherVars = []string{"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"}

// LaunchedByMPI reports whether this process was started by an MPI
// launcher, and by which variable that shows (e.g. "OMPI_COMM_WORLD_SIZE=2").
func LaunchedByMPI() (bool, string) {
	for _, name := range launcherVars {
		if v, ok := os.LookupEnv(name); ok {
			return true, name + "=" + v
		}
	}
	return false, ""
}

// Init returns the Group of this process. Started by an MPI launcher, it
// initialises MPI (once per process; MPI cannot be restarted after
// Finalize) and fails with ErrNotBuilt in a build without -tags mpi, rather
// than letting every rank train alone. Started any other way it returns
// Single(), without touching MPI.
func Init() (Group, error) {
	launched, why := LaunchedByMPI()
	if !launched {
		return Single(), nil
	}
	if !Built {
		return nil, fmt.Errorf("dist.Init: this process was started by an MPI launcher (%s) but was %w", why, ErrNotBuilt)
	}
	return initMPI()
}

// ExportEnv sets the torchrun-style variables RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE and NODE_RANK in this process's environment from g, for
// user code that reads them.
func ExportEnv(g Group) error {
	for _, kv := range []struct {
		name  string
		value int
	}{
		{"RANK", g.Rank()}, {"WORLD_SIZE", g.Size()}, {"LOCAL_RANK", g.LocalRank()},
		{"LOCAL_WORLD_SIZE", g.LocalSize()}, {"NODE_RANK", g.NodeRank()},
	} {
		if err := os.Setenv(kv.name, fmt.Sprint(kv.value)); err != nil {
			return fmt.Errorf("dist.ExportEnv: %s: %w", kv.name, err)
		}
	}
	return nil
}
