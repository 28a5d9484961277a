// Package dist is volt's data-parallel communication layer: a Group of
// processes (ranks) that all-reduce, broadcast, gather and agree, over MPI.
// Start with [Init], which returns this process's [Group].
//
// MPI is linked only in builds with the file-level build tag "mpi"
// (go build -tags mpi; needs Debian's libopenmpi-dev and pkg-config). A
// default build needs no MPI: Init returns a single-process Group (rank 0 of
// 1, every collective an identity), and anything that needs MPI (being
// started by mpirun, RelaunchCommand) fails with an error wrapping
// ErrNotBuilt, which says how to rebuild.
//
// Launch N ranks on one machine with
//
//	go build -tags mpi -o train . && mpirun -np 2 ./train
//
// (as root add --allow-run-as-root; with more ranks than cores add
// --oversubscribe; MPIRunCommand sets both through the environment), on
// several machines with mpirun -H a:8,b:8, or under SLURM with
// srun --mpi=pmix. Init reads the rank, size and node-local rank from MPI.
//
// Rules every rank must follow, as with any MPI program:
//   - call the collectives (AllReduce*, Broadcast, AllGather*, Barrier,
//     AnyTrue) in the same order, with the same lengths, on every rank; a
//     mismatch deadlocks or corrupts. Call them from one goroutine (the
//     binding runs one MPI call at a time, so calls from two goroutines would
//     reach MPI in an order that may differ between ranks);
//   - end a failing rank with Group.Abort (or defer AbortOnPanic), never a
//     plain return: Abort ends every rank at once, printing the failing
//     rank and its error, where the others would otherwise wait in their
//     next collective until mpirun notices the exit.
package dist
