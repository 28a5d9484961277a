package nn

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/torchinit"
)

// Embedding is torch.nn.Embedding(num, dim) looked up at integer indices
// [any shape]: the rows of weight [num, dim] (in scope, torch's name),
// N(0, 1) as torch initialises it, giving [indices' shape…, dim] in
// dtype. An index outside [0, num) is clamped by the backend (torch
// raises).
func Embedding(scope *model.Scope, indices *graph.Node, num, dim int, dtype dtypes.DType) *graph.Node {
	if !indices.DType().IsInt() || num < 1 || dim < 1 {
		panic(fmt.Sprintf("nn.Embedding: indices must be integers and num, dim positive, got %s, %d, %d", indices.Shape(), num, dim))
	}
	init := torchinit.Initializer(scope.Store(), torchinit.Rule{Dist: "normal", Bound: 1})
	w := param(scope, "nn.Embedding", "weight", dtype, init, num, dim).NodeValue(indices.Graph())
	return graph.Gather(w, graph.ExpandAxes(indices, -1))
}
