package nn

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
)

// ScaledDotProductAttention is torch.nn.functional's
// scaled_dot_product_attention(q, k, v, is_causal=causal) without dropout:
// softmax(q·kᵀ/√D)·v over q [..., L, D], k [..., S, D] and v [..., S, Dv]
// with the same leading (batch, head) axes; causal masks every key after
// the query's position (L must equal S).
func ScaledDotProductAttention(q, k, v *graph.Node, causal bool) *graph.Node {
	r := q.Rank()
	if r < 2 || k.Rank() != r || v.Rank() != r || q.Shape().Dim(-1) != k.Shape().Dim(-1) || k.Shape().Dim(-2) != v.Shape().Dim(-2) {
		panic(fmt.Sprintf("nn.ScaledDotProductAttention: q [..., L, D], k [..., S, D] and v [..., S, Dv] must agree, got %s, %s, %s", q.Shape(), k.Shape(), v.Shape()))
	}
	batch := make([]int, r-2)
	for i := range batch {
		batch[i] = i
	}
	scores := graph.DotGeneral(q, []int{r - 1}, batch, k, []int{r - 1}, batch) // [..., L, S]
	scores = graph.MulScalar(scores, 1/math.Sqrt(float64(q.Shape().Dim(-1))))
	if causal {
		l, s := q.Shape().Dim(-2), k.Shape().Dim(-2)
		if l != s {
			panic(fmt.Sprintf("nn.ScaledDotProductAttention: causal needs as many queries as keys, got L %d and S %d", l, s))
		}
		g := q.Graph()
		later := graph.GreaterThan(graph.Iota(g, graphShape(dtypes.Int32, l, s), 1), graph.Iota(g, graphShape(dtypes.Int32, l, s), 0))
		later = graph.BroadcastToDims(graph.ExpandLeftToRank(later, r), scores.Shape().Dimensions...)
		negInf := graph.BroadcastToDims(graph.Scalar(g, scores.DType(), math.Inf(-1)), scores.Shape().Dimensions...)
		scores = graph.Where(later, negInf, scores)
	}
	return graph.DotGeneral(graph.Softmax(scores, -1), []int{r - 1}, batch, v, []int{r - 2}, batch)
}
