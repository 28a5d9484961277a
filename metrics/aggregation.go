package metrics

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// Aggregation metrics take the values as preds and, for Mean only, the
// weights as target (nil: every weight is 1). NaN values (and, for Mean, NaN
// weights) are dropped, as torchmetrics' default nan_strategy does.

// MeanMetric is the weighted mean of every value seen: torchmetrics' MeanMetric.
type MeanMetric struct{}

// SumMetric is the sum of every value seen: torchmetrics' SumMetric.
type SumMetric struct{}

// MaxMetric is the largest value seen (-Inf before any): torchmetrics' MaxMetric.
type MaxMetric struct{}

// MinMetric is the smallest value seen (+Inf before any): torchmetrics' MinMetric.
type MinMetric struct{}

// CatMetric keeps every value seen, flattened, in order: torchmetrics' CatMetric.
// Its state grows with the data and lives on the host (ReduceCat): each step
// copies the batch's values to the host.
type CatMetric struct{}

// notNaN returns the mask of elements of x that are not NaN.
func notNaN(x *graph.Node) *graph.Node { return graph.LogicalNot(graph.IsNaN(x)) }

// flatF64 flattens x and converts it to float64.
func flatF64(x *graph.Node) *graph.Node {
	return graph.ConvertDType(graph.Reshape(x, -1), dtypes.Float64)
}

// States implements Updater.
func (MeanMetric) States() []StateSpec {
	return []StateSpec{
		{Name: "mean_value", DType: dtypes.Float64, Reduce: ReduceSum},
		{Name: "weight", DType: dtypes.Float64, Reduce: ReduceSum},
	}
}

// Update implements Updater: target holds the weights (nil for 1), broadcast
// to the values' shape.
func (MeanMetric) Update(state []*graph.Node, value, weight *graph.Node) []*graph.Node {
	v := graph.ConvertDType(value, dtypes.Float64)
	w := graph.OnesLike(v)
	if weight != nil {
		w = graph.BroadcastToShape(graph.ConvertDType(weight, dtypes.Float64), v.Shape())
	}
	keep := graph.LogicalAnd(notNaN(v), notNaN(w))
	zero := graph.ZerosLike(v)
	return []*graph.Node{
		graph.Add(state[0], graph.ReduceAllSum(graph.Where(keep, graph.Mul(v, w), zero))),
		graph.Add(state[1], graph.ReduceAllSum(graph.Where(keep, w, zero))),
	}
}

// Compute implements Metric.
func (MeanMetric) Compute(state []*tensors.Tensor) (Value, error) {
	return scalar(flatFloat64(state[0])[0] / flatFloat64(state[1])[0]), nil
}

// States implements Updater.
func (SumMetric) States() []StateSpec {
	return []StateSpec{{Name: "sum_value", DType: dtypes.Float64, Reduce: ReduceSum}}
}

// Update implements Updater (target is ignored).
func (SumMetric) Update(state []*graph.Node, value, _ *graph.Node) []*graph.Node {
	v := flatF64(value)
	return []*graph.Node{graph.Add(state[0], graph.ReduceAllSum(graph.Where(notNaN(v), v, graph.ZerosLike(v))))}
}

// Compute implements Metric.
func (SumMetric) Compute(state []*tensors.Tensor) (Value, error) {
	return scalar(flatFloat64(state[0])[0]), nil
}

// States implements Updater.
func (MaxMetric) States() []StateSpec {
	return []StateSpec{{Name: "max_value", DType: dtypes.Float64, Init: math.Inf(-1), Reduce: ReduceMax}}
}

// Update implements Updater (target is ignored).
func (MaxMetric) Update(state []*graph.Node, value, _ *graph.Node) []*graph.Node {
	v := flatF64(value)
	return []*graph.Node{graph.Max(state[0], graph.ReduceAllMax(graph.Where(notNaN(v), v, graph.Infinity(v.Graph(), dtypes.Float64, -1))))}
}

// Compute implements Metric.
func (MaxMetric) Compute(state []*tensors.Tensor) (Value, error) {
	return scalar(flatFloat64(state[0])[0]), nil
}

// States implements Updater.
func (MinMetric) States() []StateSpec {
	return []StateSpec{{Name: "min_value", DType: dtypes.Float64, Init: math.Inf(1), Reduce: ReduceMin}}
}

// Update implements Updater (target is ignored).
func (MinMetric) Update(state []*graph.Node, value, _ *graph.Node) []*graph.Node {
	v := flatF64(value)
	return []*graph.Node{graph.Min(state[0], graph.ReduceAllMin(graph.Where(notNaN(v), v, graph.Infinity(v.Graph(), dtypes.Float64, 1))))}
}

// Compute implements Metric.
func (MinMetric) Compute(state []*tensors.Tensor) (Value, error) {
	return scalar(flatFloat64(state[0])[0]), nil
}

// States implements Updater.
func (CatMetric) States() []StateSpec {
	return []StateSpec{{Name: "value", DType: dtypes.Float64, Reduce: ReduceCat}}
}

// Update implements Updater: the batch's values, flattened, are the rows to
// append (NaNs are dropped by Compute).
func (CatMetric) Update(_ []*graph.Node, value, _ *graph.Node) []*graph.Node {
	return []*graph.Node{flatF64(value)}
}

// Compute implements Metric: every value, NaNs dropped, as a vector.
func (CatMetric) Compute(state []*tensors.Tensor) (Value, error) {
	var out []float64
	for _, v := range flatFloat64(state[0]) {
		if !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return vector(out), nil
}
