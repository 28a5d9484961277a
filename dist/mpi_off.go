//go:build !mpi

package dist

import "fmt"

// initMPI fails: this build does not link MPI.
func initMPI() (Group, error) {
	return nil, fmt.Errorf("dist.Init: %w", ErrNotBuilt)
}
