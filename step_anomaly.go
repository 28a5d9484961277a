package volt

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// ClassLabels returns labels, class indices for a sparse cross-entropy
// (loss.SparseCategoricalCrossEntropyLogits), unchanged. With
// Config.DetectAnomaly (Lightning's detect_anomaly) a training, validation
// or test step also checks that every label is in [0, numClasses): an
// out-of-range label, which GoMLX's one-hot encoding turns into a zero row
// that trains on silently (PyTorch raises "Target 7 is out of bounds"),
// stops the run with an error naming the label and the batch. A training
// batch's optimizer step has been taken by then (the check is an output of
// the compiled step). Without DetectAnomaly, and in predict steps, it adds
// nothing to the graph.
//
//	labels := s.ClassLabels(b.Label(0), 10)
//	l := loss.SparseCategoricalCrossEntropyLogits([]*graph.Node{graph.ExpandAxes(labels, -1)}, []*graph.Node{logits})
func (s *Step) ClassLabels(labels *Node, numClasses int) *Node {
	if !s.checksLabels {
		return labels
	}
	if numClasses < 1 {
		panic(fmt.Sprintf("volt.Step.ClassLabels: numClasses must be >= 1, got %d", numClasses))
	}
	if !labels.DType().IsInt() {
		panic(fmt.Sprintf("volt.Step.ClassLabels: labels are %s; class indices are integers", labels.Shape()))
	}
	s.addLabelCheck(labels, numClasses, nil, "")
	return labels
}

// addLabelCheck makes the step check, on every batch, that every class
// index in labels (but ignore, when not nil) is in [0, numClasses). metric
// names the logged metric whose task gives the classes ("" for
// ClassLabels).
func (s *Step) addLabelCheck(labels *Node, numClasses int, ignore *int, metric string) {
	for _, c := range s.labelChecks {
		if c.numClasses == numClasses && c.labels == labels && c.metric == metric {
			return
		}
	}
	g := labels.Graph()
	flat := graph.ConvertDType(graph.Reshape(labels, labels.Shape().Size()), dtypes.Int64)
	if ignore != nil {
		// An ignored target counts as class 0, which is always valid.
		flat = graph.Where(graph.Equal(flat, graph.Scalar(g, dtypes.Int64, *ignore)), graph.ZerosLike(flat), flat)
	}
	bounds := graph.Concatenate([]*graph.Node{graph.Reshape(graph.ReduceAllMin(flat), 1), graph.Reshape(graph.ReduceAllMax(flat), 1)}, 0)
	s.labelChecks = append(s.labelChecks, labelCheck{numClasses: numClasses, bounds: bounds, labels: labels, ignore: ignore, metric: metric})
}

// labelCheck is one check of class indices of a traced step: their
// [min, max], an output of the step.
type labelCheck struct {
	numClasses int
	bounds     *graph.Node
	labels     *Node  // the checked node
	ignore     *int   // a target value that is no class (metrics.Task.IgnoreIndex)
	metric     string // the logged metric whose task gives the classes; "" for Step.ClassLabels
}

// labelCheckOutputs returns the nodes of the step's label checks, which
// follow its logged values among the program's outputs.
func (s *Step) labelCheckOutputs() []*graph.Node {
	out := make([]*graph.Node, len(s.labelChecks))
	for i, c := range s.labelChecks {
		out[i] = c.bounds
	}
	return out
}

// checkLabels reads the label checks' outputs of a step; the caller says
// which batch (the evaluation loops' StepError does).
//
// A multiclass metric logged by the step (Step.LogMetric, LogMetrics,
// UpdateMetric) checks its integer targets so, whatever DetectAnomaly:
// GoMLX's one-hot encoding would count an out-of-range class nowhere, where
// PyTorch and torchmetrics raise.
func checkLabels(checks []labelCheck, bounds []*tensors.Tensor) error {
	for i, c := range checks {
		b := tensors.MustCopyFlatData[int64](bounds[i])
		bad := b[0]
		if bad >= 0 {
			bad = b[1]
		}
		if bad >= 0 && bad < int64(c.numClasses) {
			continue
		}
		if c.metric == "" {
			return fmt.Errorf("volt: DetectAnomaly: class label %d is out of bounds for %d classes (Step.ClassLabels: valid labels are 0 to %d)",
				bad, c.numClasses, c.numClasses-1)
		}
		valid := fmt.Sprintf("0 to %d", c.numClasses-1)
		if c.ignore != nil {
			valid += fmt.Sprintf(", or the ignored %d", *c.ignore)
		}
		return fmt.Errorf("volt: %s: target class %d is out of bounds for its task's %d classes (metrics.Multiclass(%d): valid targets are %s)",
			c.metric, bad, c.numClasses, c.numClasses, valid)
	}
	return nil
}
