// Package mpi is volt's thin cgo binding to an MPI library (Debian's
// OpenMPI, found with pkg-config "ompi"). Its cgo files are selected by the
// file-level build tag "mpi", so a default build compiles only this file and
// needs no MPI headers; a build with -tags mpi has a different file set and
// therefore a different build-cache key (see golang/go#73033: tag-conditional
// #cgo lines inside one file set are not told apart by the cache).
//
// MPI_Init_thread and MPI_Finalize run on one goroutine locked to its OS
// thread. MPI is asked for MPI_THREAD_SERIALIZED: with it (OpenMPI grants
// it) the other calls run on the calling goroutine's thread, never two at a
// time (a mutex); with only FUNNELED they are handed to the locked thread.
// Buffers are Go slices passed to blocking calls only, which the cgo
// pointer rules allow.
//
// Use the public package github.com/voltml/volt/dist; this one is internal
// so that C types and the single-thread rule stay out of its API.
package mpi

// Built reports whether this build links MPI (-tags mpi).
const Built = built
