package metrics

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// CalibrationNorm is the norm CalibrationError takes over the bins.
type CalibrationNorm int

const (
	// NormL1 is the expected calibration error (torchmetrics' default).
	NormL1 CalibrationNorm = iota
	// NormL2 is the root mean square calibration error.
	NormL2
	// NormMax is the maximum calibration error.
	NormMax
)

// CalibrationError is torchmetrics' CalibrationError for binary and
// multiclass tasks: confidences (the score, or the top class's probability)
// are binned into Bins equal-width bins, and the gap between each bin's mean
// confidence and accuracy is combined with the norm.
//
// torchmetrics keeps every confidence (a growing list); volt keeps per bin
// the count, the sum of confidences and the sum of accuracies, a fixed-size
// state that gives the same value (sums differ in the last float32 bits).
type CalibrationError struct {
	task Task
	bins int
	norm CalibrationNorm
}

// NewCalibrationError returns the calibration error of task over bins bins.
func NewCalibrationError(task Task, bins int, norm CalibrationNorm) (*CalibrationError, error) {
	if err := task.Validate(); err != nil {
		return nil, fmt.Errorf("CalibrationError: %w", err)
	}
	if task.Kind == MultilabelTask {
		return nil, fmt.Errorf("CalibrationError: Task.Kind multilabel, want binary or multiclass")
	}
	if bins < 1 {
		return nil, fmt.Errorf("CalibrationError: bins = %d, want 1 or more", bins)
	}
	if norm < NormL1 || norm > NormMax {
		return nil, fmt.Errorf("CalibrationError: norm = %d, want NormL1, NormL2 or NormMax", int(norm))
	}
	return &CalibrationError{task: task, bins: bins, norm: norm}, nil
}

// Tasks implements Classifier.
func (m *CalibrationError) Tasks() []Task { return []Task{m.task} }

// States implements Updater: torchmetrics' bucketize puts a confidence of
// exactly 1 in a bin of its own, hence bins+1 entries.
func (m *CalibrationError) States() []StateSpec {
	b := []int{m.bins + 1}
	return []StateSpec{
		{Name: "count", DType: dtypes.Int64, Dims: b, Reduce: ReduceSum},
		{Name: "confidence_sum", DType: dtypes.Float64, Dims: b, Reduce: ReduceSum},
		{Name: "accuracy_sum", DType: dtypes.Float64, Dims: b, Reduce: ReduceSum},
	}
}

// Update implements Updater.
func (m *CalibrationError) Update(state []*graph.Node, preds, target *graph.Node) []*graph.Node {
	cs := curveState{task: m.task}
	scores, labels, valid := cs.scores(preds, target)
	var conf, acc *graph.Node
	if m.task.Kind == BinaryTask {
		conf = graph.Reshape(scores, -1)
		acc = graph.ConvertDType(labels, conf.DType())
	} else {
		conf = graph.ReduceMax(scores, 1)
		hit := graph.Equal(graph.ArgMax(scores, 1, dtypes.Int64), labels)
		acc = graph.ConvertDType(hit, conf.DType())
	}
	// bin = #(boundaries ≤ conf) - 1, with torch.linspace's boundaries.
	bounds := graph.Reshape(graph.ConstAsDType(conf.Graph(), conf.DType(), Linspace(m.bins+1)), 1, m.bins+1)
	atOrAbove := graph.GreaterOrEqual(graph.InsertAxes(conf, -1), bounds)
	bin := graph.Sub(graph.ReduceSum(graph.ConvertDType(atOrAbove, dtypes.Int64), 1), graph.Scalar(conf.Graph(), dtypes.Int64, 1))
	in := graph.LogicalAnd(graph.OneHot(bin, m.bins+1, dtypes.Bool), graph.InsertAxes(valid, -1)) // [N, B+1]
	inF := graph.ConvertDType(in, dtypes.Float64)
	return []*graph.Node{
		graph.Add(state[0], graph.ReduceSum(graph.ConvertDType(in, dtypes.Int64), 0)),
		graph.Add(state[1], graph.ReduceSum(graph.Mul(inF, graph.InsertAxes(graph.ConvertDType(conf, dtypes.Float64), -1)), 0)),
		graph.Add(state[2], graph.ReduceSum(graph.Mul(inF, graph.InsertAxes(graph.ConvertDType(acc, dtypes.Float64), -1)), 0)),
	}
}

// Compute implements Metric.
func (m *CalibrationError) Compute(state []*tensors.Tensor) (Value, error) {
	count, confSum, accSum := flatFloat64(state[0]), flatFloat64(state[1]), flatFloat64(state[2])
	total := sum(count)
	l1, l2, worst := 0.0, 0.0, 0.0
	for i, n := range count {
		if n == 0 {
			continue
		}
		gap := math.Abs(accSum[i]/n - confSum[i]/n)
		prop := n / total
		l1 += gap * prop
		l2 += gap * gap * prop
		worst = max(worst, gap)
	}
	switch m.norm {
	case NormL2:
		if l2 > 0 {
			return scalar(math.Sqrt(l2)), nil
		}
		return scalar(0), nil
	case NormMax:
		return scalar(worst), nil
	}
	return scalar(l1), nil
}
