//go:build mpi

package mpi

// built is true: this build links MPI.
const built = true
