package golower

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
)

// TestDenseVJPMatchesBackend: the lowered gradient of FusedDense agrees
// with the backend's FusedDenseVJP, for both weight layouts, with and
// without bias.
func TestDenseVJPMatchesBackend(t *testing.T) {
	direct := gobackend.GetBackend()
	backendVJP := WrapWith(direct, DefaultRules(), Lowering{NoDenseVJP: true})
	lowered := WrapWith(direct, DefaultRules(), Lowering{})
	for i, tc := range []struct {
		x, w   []int
		layout compute.DenseLayout
		bias   bool
	}{
		{[]int{12, 64, 128}, []int{128, 512}, compute.DenseLayoutInputOutputs, true},
		{[]int{12, 64, 512}, []int{512, 128}, compute.DenseLayoutInputOutputs, true},
		{[]int{5, 7}, []int{7, 3}, compute.DenseLayoutInputOutputs, false},
		{[]int{2, 5, 7}, []int{3, 7}, compute.DenseLayoutOutputsInput, true},
		{[]int{4, 6}, []int{6, 2, 3}, compute.DenseLayoutInputOutputs, true},
	} {
		t.Run(fmt.Sprint(tc.x, tc.w, tc.layout, tc.bias), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			x, w := randomTensor(rng, tc.x), randomTensor(rng, tc.w)
			out := tc.w[1:]
			if tc.layout == compute.DenseLayoutOutputsInput {
				out = tc.w[:len(tc.w)-1]
			}
			bias := randomTensor(rng, out)
			dy := randomTensor(rng, append(slices.Clone(tc.x[:len(tc.x)-1]), out...))
			fn := func(in []*Node) []*Node {
				var b *Node
				if tc.bias {
					b = in[2]
				}
				y := BackendFusedDense(in[0], in[1], b, compute.DenseConfig{WeightLayout: tc.layout})
				dx, dw, db := BackendFusedDenseVJP(in[0], in[1], b, y, in[3], compute.DenseConfig{WeightLayout: tc.layout})
				outs := []*Node{dx, dw}
				if tc.bias {
					outs = append(outs, db)
				}
				return outs
			}
			want := runFlat(t, backendVJP, fn, x, w, bias, dy)
			got := runFlat(t, lowered, fn, x, w, bias, dy)
			compareFlat(t, []string{"dx", "dweight", "dbias"}, got, want)
		})
	}
}
