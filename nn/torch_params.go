package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/torchinit"
)

// What the torch-named layers share: their parameters, named and shaped
// as torch's state_dict holds them, initialised as torch does.

// param returns scope's variable name of shape dims and x's dtype,
// created with init where it does not exist yet; an existing variable
// (a second trace, or loaded weights) must have that shape.
func param(scope *model.Scope, layer, name string, dtype dtypes.DType, init model.VariableInitializer, dims ...int) *model.Variable {
	store, path := scope.Store(), model.JoinPath(scope.Scope(), name)
	shape := shapes.Make(dtype, dims...)
	if v := store.GetVariable(path); v != nil {
		if !v.Shape().Equal(shape) {
			panic(fmt.Sprintf("%s: variable %s is %s, the layer needs %s", layer, path, v.Shape(), shape))
		}
		return v
	}
	return store.VariableWithShape(path, shape, init)
}

// uniformInit is torch's U(−bound, bound), drawn from scope's store.
func uniformInit(scope *model.Scope, bound float64) model.VariableInitializer {
	return torchinit.Initializer(scope.Store(), torchinit.Rule{Dist: "uniform", Bound: bound})
}

// fanInInit is torch's default for a Linear or Conv weight and bias: U(±1/√fan_in).
func fanInInit(scope *model.Scope, fanIn int) model.VariableInitializer {
	return uniformInit(scope, 1/math.Sqrt(float64(fanIn)))
}

// constInit fills a variable with value.
func constInit(value float64) model.VariableInitializer {
	return func(g *graph.Graph, shape shapes.Shape) *graph.Node {
		return graph.BroadcastToShape(graph.Scalar(g, shape.DType, value), shape)
	}
}

// perAxis expands a torch int-or-tuple argument to n values: one value
// repeats, n values stay; anything else panics naming the layer and what.
func perAxis(layer, what string, values []int, n int) []int {
	switch len(values) {
	case 1:
		return slices.Repeat(values, n)
	case n:
		return slices.Clone(values)
	}
	panic(fmt.Sprintf("%s: %s takes 1 or %d values, got %v", layer, what, n, values))
}

// tensorOf is values as a [dims…] tensor.
func tensorOf(values []float64, dims ...int) *tensors.Tensor {
	return tensors.FromFlatDataAndDimensions(values, dims...)
}

// graphShape is shapes.Make, for the layers that build index grids.
func graphShape(dtype dtypes.DType, dims ...int) shapes.Shape { return shapes.Make(dtype, dims...) }
