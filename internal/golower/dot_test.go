package golower

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
)

// dotCases are the DotGenerals of the transformer's attention (forward and
// gradients, as GoMLX's Einsum and its VJP emit them), its tied head's
// gradient, and others that exercise the swap and several contracting
// pairs.
var dotCases = []struct{ lhs, lc, lb, rhs, rc, rb []int }{
	{[]int{2, 8, 3, 4}, []int{3}, []int{0, 2}, []int{2, 8, 3, 4}, []int{3}, []int{0, 2}},
	{[]int{2, 8, 3, 8}, []int{3}, []int{0, 2}, []int{2, 8, 3, 4}, []int{1}, []int{0, 2}},
	{[]int{2, 3, 8, 8}, []int{3}, []int{0, 1}, []int{2, 8, 3, 4}, []int{1}, []int{0, 2}},
	{[]int{2, 3, 8, 8}, []int{2}, []int{0, 1}, []int{2, 8, 3, 4}, []int{1}, []int{0, 2}},
	{[]int{2, 3, 8, 4}, []int{3}, []int{0, 1}, []int{2, 8, 3, 4}, []int{3}, []int{0, 2}},
	{[]int{2, 3, 8, 4}, []int{2}, []int{0, 1}, []int{2, 8, 3, 8}, []int{1}, []int{0, 2}},
	{[]int{4, 8, 10}, []int{0, 1}, nil, []int{4, 8, 16}, []int{0, 1}, nil},
	{[]int{4, 8, 10}, []int{2}, nil, []int{10, 16}, []int{0}, nil},
	{[]int{5, 6, 7}, []int{1, 0}, nil, []int{6, 3, 5}, []int{0, 2}, nil},
	{[]int{6, 5, 2}, []int{0}, []int{2}, []int{3, 2, 6}, []int{2}, []int{1}},
	{[]int{3, 40}, []int{0}, nil, []int{3, 2}, []int{0}, nil},
}

// TestDotLayoutsMatchBackend: planned DotGenerals agree with the
// backend's own to 1e-5 of the largest value, and the transformer's
// attention cases after the scores (whose two run copies the backend
// already does) and the tied head's gradient are planned: cheaper than the
// backend's transposes.
func TestDotLayoutsMatchBackend(t *testing.T) {
	direct := gobackend.GetBackend()
	planned := WrapWith(direct, DefaultRules(), Lowering{})
	for i, tc := range dotCases {
		t.Run(fmt.Sprint(tc.lhs, tc.lc, tc.lb, tc.rhs, tc.rc, tc.rb), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 5))
			a, b := randomTensor(rng, tc.lhs), randomTensor(rng, tc.rhs)
			fn := func(in []*Node) []*Node {
				return []*Node{DotGeneral(in[0], tc.lc, tc.lb, in[1], tc.rc, tc.rb)}
			}
			want := runFlat(t, direct, fn, a, b)
			got := runFlat(t, planned, fn, a, b)
			compareFlat(t, []string{"dot"}, got, want)
			if i >= 1 && i < 7 {
				plan := planDot(tc.lhs, tc.lc, tc.lb, tc.rhs, tc.rc, tc.rb)
				if backend := backendDotCost(tc.lhs, tc.lc, tc.lb, tc.rhs, tc.rc, tc.rb); backend > 0 && plan.cost >= backend {
					t.Errorf("plan cost %g, backend's %g: not planned", plan.cost, backend)
				}
			}
		})
	}
}

// TestDotPlanAttentionValue: attention's coefficients·value takes the
// value [b, k, h, d] to [b, h, k, d] (a run copy) as the matmul's
// [batch, contracting, cross] operand, where the backend moves it element
// by element to [b, h, d, k].
func TestDotPlanAttentionValue(t *testing.T) {
	plan := planDot([]int{12, 4, 64, 64}, []int{3}, []int{0, 1}, []int{12, 64, 4, 32}, []int{1}, []int{0, 2})
	if plan.swap || !plan.rhsContractingFirst || !slices.Equal(plan.rhs.perm, []int{0, 2, 1, 3}) || len(plan.lhs.plan.steps) != 0 {
		t.Errorf("plan %+v, want the lhs as it is and the rhs transposed by [0 2 1 3], contracting first", plan)
	}
}
