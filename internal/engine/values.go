package engine

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/voltml/volt/optim"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/dtypes/float16"
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
	case bfloat16.BFloat16:
		return float64(v.Float32()), nil
	case float16.Float16:
		return float64(v.Float32()), nil
	default:
		return 0, fmt.Errorf("cannot read a %s scalar as a number", t.Shape().DType)
	}
}

// TrainableVariables returns the trainable variables that graph g reads,
// sorted by path. The order is canonical, not the store's (creation order,
// which differs between a store filled by tracing the module and one filled
// by loading a checkpoint, whose tensors are sorted by name): whatever sums
// over the variables (the global norm of clipping, the tracked total norm)
// must add them in the same order in every process, or a resumed run drifts
// from the uninterrupted one by rounding.
func TrainableVariables(store *model.Store, g *graph.Graph) []*model.Variable {
	var vars []*model.Variable
	for v := range store.IterVariables() {
		if v.Trainable && v.InUseByGraph(g) {
			vars = append(vars, v)
		}
	}
	slices.SortFunc(vars, func(a, b *model.Variable) int { return cmp.Compare(a.Path(), b.Path()) })
	return vars
}

// ToScalar converts a node to a float32 or float64 scalar for logging
// (integers, booleans and half-precision floats become float32).
func ToScalar(n *graph.Node) (*graph.Node, error) {
	if !n.Shape().IsScalar() {
		return nil, fmt.Errorf("logged values must be scalars, got shape %s", n.Shape())
	}
	if n.DType() != dtypes.Float32 && n.DType() != dtypes.Float64 {
		return graph.ConvertDType(n, dtypes.Float32), nil
	}
	return n, nil
}

// ToFloat32 returns a float32 copy of a floating-point tensor of any precision.
func ToFloat32(t *tensors.Tensor) *tensors.Tensor {
	out := make([]float32, t.Size())
	_ = t.ConstFlatData(func(flat any) {
		switch x := flat.(type) {
		case []float32:
			copy(out, x)
		case []float64:
			for i, v := range x {
				out[i] = float32(v)
			}
		case []bfloat16.BFloat16:
			for i, v := range x {
				out[i] = v.Float32()
			}
		case []float16.Float16:
			for i, v := range x {
				out[i] = v.Float32()
			}
		}
	})
	return tensors.FromFlatDataAndDimensions(out, t.Shape().Dimensions...)
}

// MinimizeAll builds, in loss's graph, opt's update (as optimizer 0) of
// every trainable variable of store that the graph uses: the whole update
// of a hand-written GoMLX training step, as the baselines volt's
// benchmarks measure against write it.
func MinimizeAll(store *model.Store, opt *optim.Optimizer, loss *graph.Node) {
	g := loss.Graph()
	vars := TrainableVariables(store, g)
	values := make([]*graph.Node, len(vars))
	for i, v := range vars {
		values[i] = v.NodeValue(g)
	}
	opt.Apply(store, 0, vars, graph.Gradient(loss, values...), nil)
}
