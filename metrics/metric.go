package metrics

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// Reduction says how one state combines across processes (data-parallel
// all-reduce) and when two states are merged on the host.
type Reduction int

const (
	// ReduceSum adds the states element by element (counts, sums).
	ReduceSum Reduction = iota + 1
	// ReduceMax keeps the element-wise maximum.
	ReduceMax
	// ReduceMin keeps the element-wise minimum.
	ReduceMin
	// ReduceCat concatenates rows along the first axis: the state grows with
	// the data and lives on the host (see StateSpec).
	ReduceCat
)

// String returns the reduction's name as torchmetrics spells it.
func (r Reduction) String() string {
	switch r {
	case ReduceSum:
		return "sum"
	case ReduceMax:
		return "max"
	case ReduceMin:
		return "min"
	case ReduceCat:
		return "cat"
	}
	return fmt.Sprintf("Reduction(%d)", int(r))
}

// StateSpec declares one state tensor of a metric.
//
// A fixed-size state (ReduceSum, ReduceMax, ReduceMin) has shape Dims and
// starts with every element equal to Init; the engine holds it as a variable
// updated inside the compiled step. A ReduceCat state is a list of rows, each
// of shape Dims; it starts empty and lives on the host in bounded chunks:
// Update returns the batch's rows, which the engine copies to the host.
//
// DType is Int64 (counts) or Float64 (sums, extrema, scores): the host side
// (merge, compute) handles exactly these two.
type StateSpec struct {
	Name   string
	DType  dtypes.DType
	Dims   []int
	Init   float64
	Reduce Reduction
}

// Size returns the number of elements of the state (of one row for ReduceCat).
func (s StateSpec) Size() int {
	n := 1
	for _, d := range s.Dims {
		n *= d
	}
	return n
}

// Updater is the graph half of a metric: its states and how a batch updates
// them.
type Updater interface {
	// States declares the metric's states, in the order Update and Compute
	// receive them.
	States() []StateSpec
	// Update adds to preds' graph the ops that fold one batch into the state.
	// state holds the current value of each fixed-size state (nil for
	// ReduceCat states); the result holds the new value of each fixed-size
	// state and, for a ReduceCat state, the batch's rows to append. It panics
	// (as GoMLX graph code does) on inputs of the wrong shape or dtype; the
	// trainer turns such panics into errors naming the step.
	Update(state []*graph.Node, preds, target *graph.Node) []*graph.Node
}

// Metric is an Updater whose accumulated state gives a value.
type Metric interface {
	Updater
	// Compute returns the metric's value from the accumulated state: one host
	// tensor per StateSpec (ReduceCat states concatenated along axis 0).
	Compute(state []*tensors.Tensor) (Value, error)
}

// Shared is implemented by metrics whose state another metric can share: two
// metrics with the same StateKey have the same States and Update, so a
// Collection keeps one state for both and runs Update once.
type Shared interface {
	StateKey() string
}

// Value is what Compute returns: a float64 tensor (a scalar when Dims is
// empty) or, for ROC and precision-recall curve metrics, curves.
type Value struct {
	Dims   []int
	Data   []float64
	Curves []Curve
}

// Curve is one curve of a ROC or precision-recall metric. ROC: X is the false
// positive rate, Y the true positive rate. Precision-recall: X is the
// precision, Y the recall (torchmetrics' order). Thresholds are the scores at
// which the points are taken.
type Curve struct {
	X, Y, Thresholds []float64
}

// Scalar returns the value of a scalar Value, or an error naming its shape.
func (v Value) Scalar() (float64, error) {
	if len(v.Dims) != 0 || len(v.Data) != 1 {
		return 0, fmt.Errorf("metric value has shape %v (%d curves), not a scalar", v.Dims, len(v.Curves))
	}
	return v.Data[0], nil
}

// scalar returns a scalar Value.
func scalar(x float64) Value { return Value{Data: []float64{x}} }

// vector returns a Value of shape [len(x)].
func vector(x []float64) Value { return Value{Dims: []int{len(x)}, Data: x} }
