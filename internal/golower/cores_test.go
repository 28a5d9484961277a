package golower

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// TestBitsDoNotDependOnCores: a stride-1 convolution and both of its
// gradients, lowered and run on a fresh Go backend at GOMAXPROCS 1, 2, 3
// and 6, give the same bits, whole and in tiles. The kernel gradient sums
// per-block products of the batch (split.go), so a split that followed the
// number of cores would change its sums from machine to machine, and a run
// resumed on another machine would leave the uninterrupted one's path.
func TestBitsDoNotDependOnCores(t *testing.T) {
	for _, lowering := range []struct {
		name     string
		lowering Lowering
	}{{"whole", Lowering{MaxShiftWaste: 1e9, ShiftTileBytes: -1}}, {"tiles", Lowering{MaxShiftWaste: 1e9, ShiftTileBytes: 4096}}} {
		t.Run(lowering.name, func(t *testing.T) {
			var want [][]uint32
			for _, procs := range []int{1, 2, 3, 6} {
				got := convolveAndGradientsAt(t, procs, lowering.lowering)
				if want == nil {
					want = got
					continue
				}
				for i := range want {
					for j := range want[i] {
						if got[i][j] != want[i][j] {
							t.Fatalf("GOMAXPROCS=%d: output %d differs at %d from GOMAXPROCS=1's", procs, i, j)
						}
					}
				}
			}
		})
	}
}

// convolveAndGradientsAt lowers and runs y = conv(x, kernel) "same" and
// the gradients of Σy² with respect to x and kernel at GOMAXPROCS=procs
// (x [12, 10, 10, 8] and kernel [3, 3, 8, 8] drawn from one seed),
// returning their bits.
func convolveAndGradientsAt(t *testing.T, procs int, lowering Lowering) [][]uint32 {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	x := randomTensor(rng, []int{12, 10, 10, 8})
	kernel := randomTensor(rng, []int{3, 3, 8, 8})
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	inner, err := compute.NewWithConfig("go")
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Finalize()
	backend := WrapWith(inner, DefaultRules(), lowering)
	outs := MustExecOnceN(backend, func(x, kernel *Node) []*Node {
		y := Convolve(x, kernel).PadSame().Done()
		return append([]*Node{y}, Gradient(ReduceAllSum(Mul(y, y)), x, kernel)...)
	}, x, kernel)
	if backend.(*Backend).ShiftedConvs() == 0 {
		t.Fatal("the convolution was not shifted")
	}
	bits := make([][]uint32, len(outs))
	for i, out := range outs {
		for _, v := range tensors.MustCopyFlatData[float32](out) {
			bits[i] = append(bits[i], math.Float32bits(v))
		}
	}
	return bits
}
