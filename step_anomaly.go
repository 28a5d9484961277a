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
	flat := graph.ConvertDType(graph.Reshape(labels, labels.Shape().Size()), dtypes.Int64)
	bounds := graph.Concatenate([]*graph.Node{graph.Reshape(graph.ReduceAllMin(flat), 1), graph.Reshape(graph.ReduceAllMax(flat), 1)}, 0)
	s.labelChecks = append(s.labelChecks, labelCheck{numClasses: numClasses, bounds: bounds})
	return labels
}

// labelCheck is one ClassLabels check of a traced training step: the
// labels' [min, max], an output of the step.
type labelCheck struct {
	numClasses int
	bounds     *graph.Node
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
func checkLabels(checks []labelCheck, bounds []*tensors.Tensor) error {
	for i, c := range checks {
		b := tensors.MustCopyFlatData[int64](bounds[i])
		bad := b[0]
		if bad >= 0 {
			bad = b[1]
		}
		if bad < 0 || bad >= int64(c.numClasses) {
			return fmt.Errorf("volt: DetectAnomaly: class label %d is out of bounds for %d classes (Step.ClassLabels: valid labels are 0 to %d)",
				bad, c.numClasses, c.numClasses-1)
		}
	}
	return nil
}
