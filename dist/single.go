package dist

import (
	"errors"
	"fmt"
	"os"
	"slices"
)

// Single returns the Group of a job of one process: rank 0 of 1, every
// reduction and broadcast leaves its buffer as it is, and a gather returns
// a copy of the values.
func Single() Group { return &single{} }

// single is the one-process Group.
type single struct{ finalized bool }

func (s *single) Rank() int      { return 0 }
func (s *single) Size() int      { return 1 }
func (s *single) LocalRank() int { return 0 }
func (s *single) LocalSize() int { return 1 }
func (s *single) NodeRank() int  { return 0 }
func (s *single) NumNodes() int  { return 1 }
func (s *single) String() string { return "single process (no MPI): rank 0 of 1" }

func (s *single) Barrier() error { return s.live("Barrier") }

func (s *single) AllReduceFloat32(_ []float32, op Op) error { return s.reduce("AllReduceFloat32", op) }
func (s *single) AllReduceFloat64(_ []float64, op Op) error { return s.reduce("AllReduceFloat64", op) }
func (s *single) AllReduceInt64(_ []int64, op Op) error     { return s.reduce("AllReduceInt64", op) }

func (s *single) Broadcast(_ []byte, root int) error {
	if err := s.live("Broadcast"); err != nil {
		return err
	}
	return checkRoot(root, 1)
}

func (s *single) AllGatherInt64(values []int64) ([]int64, error) {
	return slices.Clone(values), s.live("AllGatherInt64")
}

func (s *single) AllGatherFloat64(values []float64) ([]float64, error) {
	return slices.Clone(values), s.live("AllGatherFloat64")
}

func (s *single) Abort(err error) {
	fmt.Fprintf(os.Stderr, "volt/dist: rank 0 of 1 failed: %v\n", err)
	os.Exit(1)
}

func (s *single) Finalize() error {
	if err := s.live("Finalize"); err != nil {
		return err
	}
	s.finalized = true
	return nil
}

// reduce checks a reduction's arguments; with one rank it has nothing to do.
func (s *single) reduce(method string, op Op) error {
	if err := s.live(method); err != nil {
		return err
	}
	return op.validate()
}

// live fails once the group is finalized.
func (s *single) live(method string) error {
	if s.finalized {
		return errors.New("dist: " + method + " called after Finalize")
	}
	return nil
}

// checkRoot returns an error when root is not a rank of a group of size.
func checkRoot(root, size int) error {
	if root < 0 || root >= size {
		return fmt.Errorf("dist: Broadcast root %d is not a rank in [0, %d)", root, size)
	}
	return nil
}
