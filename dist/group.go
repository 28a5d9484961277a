package dist

import (
	"errors"
	"fmt"

	"github.com/voltml/volt/dist/internal/mpi"
)

// ErrNotBuilt is wrapped by the errors of operations that need MPI in a
// build without -tags mpi.
var ErrNotBuilt = errors.New("built without -tags mpi; rebuild with `go build -tags mpi` " +
	"(needs libopenmpi-dev and pkg-config) to run several ranks")

// Built reports whether this binary links MPI (built with -tags mpi).
const Built = mpi.Built

// Op is an element-wise reduction.
type Op int

// The reductions of the AllReduce methods.
const (
	Sum Op = iota
	Max
	Min
)

// String returns the reduction's name.
func (o Op) String() string {
	switch o {
	case Sum:
		return "sum"
	case Max:
		return "max"
	case Min:
		return "min"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// validate returns an error naming a bad Op.
func (o Op) validate() error {
	if o < Sum || o > Min {
		return fmt.Errorf("dist: reduction %d is not one of dist.Sum, dist.Max, dist.Min", int(o))
	}
	return nil
}

// Group is the set of ranks of a data-parallel job. Collective methods must
// be called by every rank, in the same order and with the same lengths (see
// the package documentation).
type Group interface {
	// Rank is this process's global rank, in [0, Size()).
	Rank() int
	// Size is the number of ranks (the world size).
	Size() int
	// LocalRank is this process's rank among the ranks on its machine.
	LocalRank() int
	// LocalSize is the number of ranks on this process's machine.
	LocalSize() int
	// NodeRank is the index of this process's machine, in [0, NumNodes()),
	// ordered by the lowest global rank on each machine.
	NodeRank() int
	// NumNodes is the number of machines.
	NumNodes() int
	// String describes the group and this rank in one line.
	String() string

	// Barrier blocks until every rank has entered it.
	Barrier() error
	// AllReduceFloat32 reduces buf element-wise across ranks, in place.
	AllReduceFloat32(buf []float32, op Op) error
	// AllReduceFloat64 reduces buf element-wise across ranks, in place.
	AllReduceFloat64(buf []float64, op Op) error
	// AllReduceInt64 reduces buf element-wise across ranks, in place.
	AllReduceInt64(buf []int64, op Op) error
	// Broadcast copies rank root's buf into every other rank's buf.
	Broadcast(buf []byte, root int) error
	// AllGatherInt64 returns every rank's values, concatenated in rank
	// order (Size()*len(values) elements).
	AllGatherInt64(values []int64) ([]int64, error)
	// AllGatherFloat64 returns every rank's values, concatenated in rank
	// order (Size()*len(values) elements).
	AllGatherFloat64(values []float64) ([]float64, error)

	// Abort prints "rank R of N failed: err" to stderr and ends every rank
	// of the job with exit code 1. It does not return.
	Abort(err error)
	// Finalize ends the group; no method may be called after it.
	Finalize() error
}
