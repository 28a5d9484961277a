//go:build !mpi

package mpi

// built is false: this build does not link MPI.
const built = false
