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
// scope/MultiHeadAttention), the same scale, mask and softmax. It differs
// in one thing, the layout of the scores: [batch, heads, q, k], the axis
// order DotGeneral produces, where GoMLX's attention keeps them as
// [batch, q, heads, k] and so transposes them out of the first product and
// back into the second, forward and backward: five run copies of the
// largest tensor of each block (BenchmarkCharGPTStep: 0.94× the CPU time of
// the step with GoMLX's attention, at one and two threads).
// TestAttentionMatchesGoMLX checks that the two agree.
func causalSelfAttention(scope *model.Scope, x *graph.Node, heads, headDim int) *graph.Node {
	g := x.Graph()
	mha := scope.In("MultiHeadAttention")
	key := layers.Dense(mha.In("key"), x, true, heads, headDim) // [batch, seq, heads, headDim]
	query := layers.Dense(mha.In("query"), x, true, heads, headDim)
	value := layers.Dense(mha.In("value"), x, true, heads, headDim)
	scores := graph.Einsum("bqhd,bkhd->bhqk", query, key)
	scores = graph.MulScalar(scores, 1/math.Sqrt(float64(headDim)))
	seq := x.Shape().Dim(1)
	causal := graph.Reshape(graph.LowerTriangular(g, seq), 1, 1, seq, seq)
	coefficients := graph.MaskedSoftmax(scores, causal, -1)
	out := graph.Einsum("bhqk,bkhd->bqhd", coefficients, value)
	out = graph.Reshape(out, x.Shape().Dim(0), seq, heads*headDim)
	return layers.Dense(mha.In("output"), out, true, x.Shape().Dim(-1))
}
