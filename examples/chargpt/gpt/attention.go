package gpt

import (
	"math"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
)

// causalSelfAttention is GoMLX's decomposed MultiHeadAttention for
// self-attention with a causal mask (attention.SelfAttention(scope, x,
// heads, headDim).WithCausalMask(true).WithFusion(false)): the same
// variables, created in the same order (key, query, value, output under
// scope/MultiHeadAttention), the same scale and mask. It differs in two
// things. The scores are laid out as [batch, heads, q, k], the axis order
// DotGeneral produces, where GoMLX's attention keeps them as
// [batch, q, heads, k] and so transposes them out of the first product and
// back into the second, forward and backward: five run copies of the
// largest tensor of each block (BenchmarkCharGPTStep: 0.94× the CPU time of
// the step with GoMLX's attention, at one and two threads). And the
// softmax is causalSoftmax (0.975× the step with MaskedSoftmax).
// TestAttentionMatchesGoMLX checks that the model agrees with GoMLX's
// attention.
func causalSelfAttention(scope *model.Scope, x *graph.Node, heads, headDim int) *graph.Node {
	mha := scope.In("MultiHeadAttention")
	key := layers.Dense(mha.In("key"), x, true, heads, headDim) // [batch, seq, heads, headDim]
	query := layers.Dense(mha.In("query"), x, true, heads, headDim)
	value := layers.Dense(mha.In("value"), x, true, heads, headDim)
	scores := graph.Einsum("bqhd,bkhd->bhqk", query, key)
	scores = graph.MulScalar(scores, 1/math.Sqrt(float64(headDim)))
	seq := x.Shape().Dim(1)
	var coefficients *graph.Node
	if maskedSoftmax {
		coefficients = graph.MaskedSoftmax(scores, graph.Reshape(graph.LowerTriangular(scores.Graph(), seq), 1, 1, seq, seq), -1)
	} else {
		coefficients = causalSoftmax(scores, seq)
	}
	out := graph.Einsum("bhqk,bkhd->bqhd", coefficients, value)
	out = graph.Reshape(out, x.Shape().Dim(0), seq, heads*headDim)
	return layers.Dense(mha.In("output"), out, true, x.Shape().Dim(-1))
}

// maskedSoftmax makes causalSelfAttention use GoMLX's MaskedSoftmax instead
// of causalSoftmax; tests compare the two.
var maskedSoftmax bool

// causalSoftmax is MaskedSoftmax(scores, LowerTriangular, -1) for scores
// [batch, heads, q, k]: the masked scores are set to −∞ by adding a constant
// (0 or −∞), so that a plain softmax gives them exactly 0 and the others
// exactly MaskedSoftmax's values (the same maximum, differences and sums),
// with 7 ops forward instead of 10 and none of the three Wheres' gradients.
func causalSoftmax(scores *graph.Node, seq int) *graph.Node {
	g := scores.Graph()
	dtype := scores.DType()
	bias := graph.Where(graph.LowerTriangular(g, seq), graph.ScalarZero(g, dtype), graph.Infinity(g, dtype, -1))
	scores = graph.Add(scores, graph.Reshape(bias, 1, 1, seq, seq))
	shifted := graph.Sub(scores, graph.StopGradient(graph.ReduceAndKeep(scores, graph.ReduceMax, -1)))
	numerator := graph.Exp(shifted)
	return graph.Div(numerator, graph.ReduceAndKeep(numerator, graph.ReduceSum, -1))
}
