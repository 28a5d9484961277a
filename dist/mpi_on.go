//go:build mpi

package dist

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"

	"github.com/voltml/volt/dist/internal/mpi"
)

// maxMessageBytes bounds one MPI_Allreduce: OpenMPI allocates a temporary
// buffer per call, and a fresh 64 MiB mapping costs ~0.5 s on the VMs the
// research measured (../shared/research/distributed.md), so longer buffers
// are reduced in pieces of at most this size.
const maxMessageBytes = 16 << 20

// mpiGroup is the Group of an MPI job (MPI_COMM_WORLD).
type mpiGroup struct {
	info               mpi.Info
	nodeRank, numNodes int
}

// initMPI initialises MPI at the SERIALIZED threading level (every call is
// made on the binding's one locked OS thread) and works out the node ranks.
func initMPI() (Group, error) {
	info, err := mpi.Init(mpi.ThreadSerialized)
	if err != nil {
		return nil, fmt.Errorf("dist.Init: %w", err)
	}
	g := &mpiGroup{info: info}
	if err := g.findNodes(); err != nil {
		return nil, fmt.Errorf("dist.Init: numbering the machines: %w", err)
	}
	return g, nil
}

// findNodes numbers the machines: the node-local rank 0 of each machine
// counts the machines whose local rank 0 has a lower global rank, then
// broadcasts that number to the other ranks of its machine.
func (g *mpiGroup) findNodes() error {
	isRoot := int64(0)
	if g.info.LocalRank == 0 {
		isRoot = 1
	}
	roots := make([]int64, g.info.Size)
	if err := mpi.AllGather([]int64{isRoot}, roots); err != nil {
		return err
	}
	for r, v := range roots {
		g.numNodes += int(v)
		if r < g.info.Rank && v == 1 {
			g.nodeRank++
		}
	}
	buf := binary.LittleEndian.AppendUint64(nil, uint64(g.nodeRank))
	if err := mpi.Broadcast(buf, 0, true); err != nil {
		return err
	}
	g.nodeRank = int(binary.LittleEndian.Uint64(buf))
	return nil
}

func (g *mpiGroup) Rank() int      { return g.info.Rank }
func (g *mpiGroup) Size() int      { return g.info.Size }
func (g *mpiGroup) LocalRank() int { return g.info.LocalRank }
func (g *mpiGroup) LocalSize() int { return g.info.LocalSize }
func (g *mpiGroup) NodeRank() int  { return g.nodeRank }
func (g *mpiGroup) NumNodes() int  { return g.numNodes }

func (g *mpiGroup) String() string {
	lib, _, _ := strings.Cut(g.info.Library, ",")
	copies := ""
	if v := os.Getenv(SingleCopyVar); v != "" {
		copies = ", single copy " + v // SingleCopyVar
	}
	return fmt.Sprintf("MPI (%s, %s%s): rank %d of %d, local rank %d of %d on node %d of %d",
		strings.TrimSpace(lib), g.info.Threading, copies, g.info.Rank, g.info.Size,
		g.info.LocalRank, g.info.LocalSize, g.nodeRank, g.numNodes)
}

func (g *mpiGroup) Barrier() error { return wrap("Barrier", mpi.Barrier()) }

func (g *mpiGroup) AllReduceFloat32(buf []float32, op Op) error {
	return wrap("AllReduceFloat32", allReduce(buf, op, 4))
}

func (g *mpiGroup) AllReduceFloat64(buf []float64, op Op) error {
	return wrap("AllReduceFloat64", allReduce(buf, op, 8))
}

func (g *mpiGroup) AllReduceInt64(buf []int64, op Op) error {
	return wrap("AllReduceInt64", allReduce(buf, op, 8))
}

// allReduce reduces buf in place in pieces of at most maxMessageBytes.
func allReduce[T mpi.Element](buf []T, op Op, elemBytes int) error {
	if err := op.validate(); err != nil {
		return err
	}
	step := maxMessageBytes / elemBytes
	for len(buf) > 0 {
		n := min(len(buf), step)
		if err := mpi.AllReduce(buf[:n], mpi.Op(op)); err != nil {
			return err
		}
		buf = buf[n:]
	}
	return nil
}

func (g *mpiGroup) Broadcast(buf []byte, root int) error {
	if err := checkRoot(root, g.info.Size); err != nil {
		return err
	}
	return wrap("Broadcast", mpi.Broadcast(buf, root, false))
}

func (g *mpiGroup) AllGatherInt64(values []int64) ([]int64, error) {
	out := make([]int64, g.info.Size*len(values))
	return out, wrap("AllGatherInt64", mpi.AllGather(values, out))
}

func (g *mpiGroup) AllGatherFloat64(values []float64) ([]float64, error) {
	out := make([]float64, g.info.Size*len(values))
	return out, wrap("AllGatherFloat64", mpi.AllGather(values, out))
}

func (g *mpiGroup) Abort(err error) {
	fmt.Fprintf(os.Stderr, "volt/dist: rank %d of %d failed, aborting all ranks: %v\n", g.info.Rank, g.info.Size, err)
	if abortErr := mpi.Abort(1); abortErr != nil {
		fmt.Fprintf(os.Stderr, "volt/dist: rank %d: %v\n", g.info.Rank, abortErr)
	}
	os.Exit(1)
}

func (g *mpiGroup) Finalize() error { return wrap("Finalize", mpi.Finalize()) }

// wrap prefixes a binding error with the Group method that failed.
func wrap(method string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("dist.%s: %w", method, err)
}
