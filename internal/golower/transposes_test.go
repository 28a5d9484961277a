package golower

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// runFlat runs fn on backend with copies of inputs (a tensor stays with
// the backend that first put it on a device, so each backend gets its own)
// and returns its outputs' flat values.
func runFlat(t *testing.T, backend compute.Backend, fn func(inputs []*Node) []*Node, inputs ...*tensors.Tensor) [][]float32 {
	t.Helper()
	exec, err := NewExec(backend, fn)
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Finalize()
	args := make([]any, len(inputs))
	for i, x := range inputs {
		args[i] = clone(t, x)
	}
	outs, err := exec.Call(args...)
	if err != nil {
		t.Fatal(err)
	}
	flats := make([][]float32, len(outs))
	for i, out := range outs {
		flats[i] = tensors.MustCopyFlatData[float32](out)
		out.FinalizeAll()
	}
	return flats
}

func TestReducePermutation(t *testing.T) {
	for _, tc := range []struct {
		dims, perm, wantDims, wantPerm []int
	}{
		{[]int{12, 64, 80}, []int{2, 0, 1}, []int{768, 80}, []int{1, 0}},
		{[]int{12, 64, 4, 32}, []int{0, 2, 1, 3}, []int{12, 64, 4, 32}, []int{0, 2, 1, 3}},
		{[]int{12, 64, 4, 32}, []int{0, 2, 3, 1}, []int{12, 64, 128}, []int{0, 2, 1}},
		{[]int{12, 1, 4, 32}, []int{0, 2, 1, 3}, []int{1536}, []int{0}},
		{[]int{1, 1}, []int{1, 0}, []int{}, []int{}},
		{[]int{2, 3, 4, 5}, []int{3, 2, 1, 0}, []int{2, 3, 4, 5}, []int{3, 2, 1, 0}},
		{[]int{2, 3, 4, 5}, []int{2, 3, 0, 1}, []int{6, 20}, []int{1, 0}},
	} {
		d, p := reducePermutation(tc.dims, tc.perm)
		if !slices.Equal(d, tc.wantDims) || !slices.Equal(p, tc.wantPerm) {
			t.Errorf("reducePermutation(%v, %v) = %v, %v, want %v, %v", tc.dims, tc.perm, d, p, tc.wantDims, tc.wantPerm)
		}
	}
}

// transposeCases are permutations of the transformer's shapes and a few
// others of ranks 2 to 5 with axes of size 1.
var transposeCases = []struct{ dims, perm []int }{
	{[]int{12, 64, 80}, []int{2, 0, 1}},
	{[]int{12, 64, 4, 32}, []int{0, 2, 1, 3}},
	{[]int{12, 64, 4, 32}, []int{0, 2, 3, 1}},
	{[]int{12, 4, 64, 64}, []int{0, 1, 3, 2}},
	{[]int{12, 4, 32, 64}, []int{0, 3, 1, 2}},
	{[]int{3, 1, 5, 2}, []int{3, 0, 2, 1}},
	{[]int{2, 3, 4, 5, 6}, []int{4, 2, 0, 3, 1}},
	{[]int{48, 64, 32}, []int{0, 2, 1}},
	{[]int{7, 9}, []int{1, 0}},
	{[]int{1, 1, 6}, []int{2, 1, 0}},
}

// TestTransposePlansMatchBackend: every planned transpose gives the
// backend's own Transpose exactly.
func TestTransposePlansMatchBackend(t *testing.T) {
	direct := gobackend.GetBackend()
	planned := WrapWith(direct, DefaultRules(), Lowering{})
	for i, tc := range transposeCases {
		t.Run(fmt.Sprint(tc.dims, tc.perm), func(t *testing.T) {
			x := randomTensor(rand.New(rand.NewPCG(uint64(i), 3)), tc.dims)
			fn := func(in []*Node) []*Node { return []*Node{TransposeAllAxes(in[0], tc.perm...)} }
			want := runFlat(t, direct, fn, x)
			got := runFlat(t, planned, fn, x)
			if !slices.Equal(got[0], want[0]) {
				t.Errorf("planned transpose differs from the backend's (plan %+v)", planTranspose(tc.dims, tc.perm))
			}
		})
	}
}

// TestTransposePlans: the planner leaves the backend's fast kernels alone
// and replaces element-wise moves it can do with them.
func TestTransposePlans(t *testing.T) {
	for _, tc := range []struct {
		dims, perm []int
		wantSteps  int // 0: a reshape
		wantFirst  []int
	}{
		{[]int{12, 64, 4, 32}, []int{0, 2, 1, 3}, 1, []int{0, 2, 1, 3}}, // the backend's own
		{[]int{12, 64, 80}, []int{2, 0, 1}, 1, []int{1, 0}},             // a 2D transpose once reshaped
		{[]int{12, 1, 4, 32}, []int{0, 2, 1, 3}, 0, nil},                // a reshape
		{[]int{48, 64, 32}, []int{0, 2, 1}, 2, []int{1, 0, 2}},          // [1, 0, 2], then 2D
	} {
		plan := planTranspose(tc.dims, tc.perm)
		if len(plan.steps) != tc.wantSteps || (tc.wantSteps > 0 && !slices.Equal(plan.steps[0].perm, tc.wantFirst)) {
			t.Errorf("planTranspose(%v, %v) = %+v, want %d steps, the first %v", tc.dims, tc.perm, plan, tc.wantSteps, tc.wantFirst)
		}
	}
}
