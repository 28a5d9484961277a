package metrics

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// MeanSquaredError is the mean of (preds - target)² over every element seen:
// torchmetrics' MeanSquaredError. With Root set it is the RMSE
// (torchmetrics' squared=False).
type MeanSquaredError struct{ Root bool }

// MeanAbsoluteError is the mean of |preds - target| over every element seen:
// torchmetrics' MeanAbsoluteError.
type MeanAbsoluteError struct{}

// Multioutput says how a regression metric of several outputs (targets of
// shape [N, K]) combines the per-output scores.
type Multioutput int

const (
	// UniformAverage is the mean of the per-output scores (the default).
	UniformAverage Multioutput = iota
	// RawValues returns one score per output.
	RawValues
	// VarianceWeighted weights each output's score by its target variance.
	VarianceWeighted
)

// errorSums returns the state update for a sum of f(preds - target) and the
// element count.
func errorSums(state []*graph.Node, preds, target *graph.Node, f func(*graph.Node) *graph.Node) []*graph.Node {
	diff := graph.Sub(flatF64(preds), flatF64(target))
	n := graph.Scalar(preds.Graph(), dtypes.Int64, preds.Shape().Size())
	return []*graph.Node{graph.Add(state[0], graph.ReduceAllSum(f(diff))), graph.Add(state[1], n)}
}

// States implements Updater.
func (MeanSquaredError) States() []StateSpec {
	return []StateSpec{
		{Name: "sum_squared_error", DType: dtypes.Float64, Reduce: ReduceSum},
		{Name: "total", DType: dtypes.Int64, Reduce: ReduceSum},
	}
}

// Update implements Updater.
func (MeanSquaredError) Update(state []*graph.Node, preds, target *graph.Node) []*graph.Node {
	checkSameShape("MeanSquaredError", preds, target)
	return errorSums(state, preds, target, graph.Square)
}

// Compute implements Metric.
func (m MeanSquaredError) Compute(state []*tensors.Tensor) (Value, error) {
	v := flatFloat64(state[0])[0] / flatFloat64(state[1])[0]
	if m.Root {
		v = math.Sqrt(v)
	}
	return scalar(v), nil
}

// StateKey implements Shared: MSE and RMSE share their state.
func (MeanSquaredError) StateKey() string { return "mean_squared_error" }

// States implements Updater.
func (MeanAbsoluteError) States() []StateSpec {
	return []StateSpec{
		{Name: "sum_abs_error", DType: dtypes.Float64, Reduce: ReduceSum},
		{Name: "total", DType: dtypes.Int64, Reduce: ReduceSum},
	}
}

// Update implements Updater.
func (MeanAbsoluteError) Update(state []*graph.Node, preds, target *graph.Node) []*graph.Node {
	checkSameShape("MeanAbsoluteError", preds, target)
	return errorSums(state, preds, target, graph.Abs)
}

// Compute implements Metric.
func (MeanAbsoluteError) Compute(state []*tensors.Tensor) (Value, error) {
	return scalar(flatFloat64(state[0])[0] / flatFloat64(state[1])[0]), nil
}

// checkSameShape panics (at trace time) when preds and target differ in
// shape.
func checkSameShape(metric string, preds, target *graph.Node) {
	if !preds.Shape().EqualDimensions(target.Shape()) {
		panic(fmt.Sprintf("%s: preds shape %v and target shape %v differ; they must be equal",
			metric, preds.Shape().Dimensions, target.Shape().Dimensions))
	}
}

// outputColumns returns x (shape [N] or [N, k]) as float64 of shape [N, k],
// panicking when its shape does not match k outputs.
func outputColumns(metric string, x *graph.Node, k int) *graph.Node {
	dims := x.Shape().Dimensions
	switch {
	case len(dims) == 1 && k == 1:
		return graph.ConvertDType(graph.Reshape(x, dims[0], 1), dtypes.Float64)
	case len(dims) == 2 && dims[1] == k:
		return graph.ConvertDType(x, dtypes.Float64)
	}
	panic(fmt.Sprintf("%s: input shape %v, want [N] (one output) or [N, %d] (NumOutputs=%d)", metric, dims, k, k))
}

// numOutputs returns k, defaulting 0 to 1.
func numOutputs(k int) int { return max(k, 1) }

// reduceOutputs combines per-output scores as m says; weights are used for
// VarianceWeighted.
func reduceOutputs(m Multioutput, scores, weights []float64) (Value, error) {
	switch m {
	case RawValues:
		if len(scores) == 1 {
			return scalar(scores[0]), nil
		}
		return vector(scores), nil
	case UniformAverage:
		s := 0.0
		for _, x := range scores {
			s += x
		}
		return scalar(s / float64(len(scores))), nil
	case VarianceWeighted:
		total := 0.0
		for _, w := range weights {
			total += w
		}
		s := 0.0
		for i, x := range scores {
			s += weights[i] / total * x
		}
		return scalar(s), nil
	}
	return Value{}, fmt.Errorf("Multioutput %d, want UniformAverage, RawValues or VarianceWeighted", int(m))
}

// colSums returns the state update adding the column sums of x ([N, k]).
func colSums(state, x *graph.Node) *graph.Node { return graph.Add(state, graph.ReduceSum(x, 0)) }

// rowCount returns the number of rows of x as an int64 scalar node.
func rowCount(x *graph.Node) *graph.Node {
	return graph.Scalar(x.Graph(), dtypes.Int64, x.Shape().Dimensions[0])
}
