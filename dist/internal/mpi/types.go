package mpi

import "fmt"

// ThreadLevel is an MPI threading level (MPI_THREAD_*), in increasing order.
type ThreadLevel int

// The MPI threading levels.
const (
	ThreadSingle ThreadLevel = iota
	ThreadFunneled
	ThreadSerialized
	ThreadMultiple
)

// String returns the MPI name of the level.
func (l ThreadLevel) String() string {
	switch l {
	case ThreadSingle:
		return "MPI_THREAD_SINGLE"
	case ThreadFunneled:
		return "MPI_THREAD_FUNNELED"
	case ThreadSerialized:
		return "MPI_THREAD_SERIALIZED"
	case ThreadMultiple:
		return "MPI_THREAD_MULTIPLE"
	}
	return fmt.Sprintf("ThreadLevel(%d)", int(l))
}

// Datatype names the MPI element type of a buffer.
type Datatype int

// The element types the binding passes to MPI.
const (
	Float32 Datatype = iota // MPI_FLOAT
	Float64                 // MPI_DOUBLE
	Int64                   // MPI_INT64_T
	Byte                    // MPI_BYTE
)

// Op is a reduction operation.
type Op int

// The reductions the binding passes to MPI.
const (
	Sum Op = iota // MPI_SUM
	Max           // MPI_MAX
	Min           // MPI_MIN
)

// Error is a failed MPI call: its name, return code and the library's
// message for that code.
type Error struct {
	Call    string
	Code    int
	Message string
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("%s failed with MPI error %d: %s", e.Call, e.Code, e.Message)
}

// Info is what Init learns about this process's place in the job.
type Info struct {
	Rank, Size           int         // in MPI_COMM_WORLD
	LocalRank, LocalSize int         // in the node-local (shared-memory) communicator
	Threading            ThreadLevel // the level MPI granted
	Library              string      // MPI_Get_library_version, e.g. "Open MPI v4.1.4, ..."
}
