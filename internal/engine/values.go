package engine

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// Float64 reads a scalar tensor of any real dtype as a float64.
func Float64(t *tensors.Tensor) (float64, error) {
	if !t.Shape().IsScalar() {
		return 0, fmt.Errorf("expected a scalar, got shape %s", t.Shape())
	}
	switch v := t.Value().(type) {
	case float32:
		return float64(v), nil
	case float64:
		return v, nil
	case int32:
		return float64(v), nil
	case int64:
		return float64(v), nil
	case int:
		return float64(v), nil
	case bool:
		if v {
			return 1, nil
		}
		return 0, nil
	default:
		return 0, fmt.Errorf("cannot read a %s scalar as a number", t.Shape().DType)
	}
}

// TrainableVariables returns the trainable variables that graph g reads, in
// the store's deterministic order.
func TrainableVariables(store *model.Store, g *graph.Graph) []*model.Variable {
	var vars []*model.Variable
	for v := range store.IterVariables() {
		if v.Trainable && v.InUseByGraph(g) {
			vars = append(vars, v)
		}
	}
	return vars
}

// Gradients returns d loss / d v for each variable.
func Gradients(loss *graph.Node, vars []*model.Variable) []*graph.Node {
	nodes := make([]*graph.Node, len(vars))
	for i, v := range vars {
		nodes[i] = v.NodeValue(loss.Graph())
	}
	return graph.Gradient(loss, nodes...)
}

// ToScalar converts a node to a float scalar of the same float dtype, or to
// float32 when it is an integer or boolean, for logging.
func ToScalar(n *graph.Node) (*graph.Node, error) {
	if !n.Shape().IsScalar() {
		return nil, fmt.Errorf("logged values must be scalars, got shape %s", n.Shape())
	}
	if !n.DType().IsFloat() {
		return graph.ConvertDType(n, dtypes.Float32), nil
	}
	return n, nil
}
