// Package digits holds the MNIST models the examples share: the MLP of
// examples/mnist and examples/cli and the CNN of examples/cnn, and the
// volt steps every digit classifier has in common (the same loss, accuracy
// and logged names, whatever computes its logits).
package digits

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
)

// LogitsFn computes the [batch, 10] class scores of flattened [batch, 784]
// images.
type LogitsFn func(s *volt.Step, images *graph.Node) *graph.Node

// lossAndAccuracy returns the mean cross-entropy and the accuracy of a batch.
func lossAndAccuracy(s *volt.Step, b volt.Batch, logitsOf LogitsFn) (*graph.Node, *graph.Node) {
	logits := logitsOf(s, b.Input(0))
	labels := graph.ConvertDType(b.Label(0), dtypes.Int32) // [batch]
	l := loss.SparseCategoricalCrossEntropyLogits([]*graph.Node{graph.ExpandAxes(labels, -1)}, []*graph.Node{logits})
	correct := graph.Equal(graph.ArgMax(logits, -1, dtypes.Int32), labels)
	return l, graph.ReduceAllMean(graph.ConvertDType(correct, logits.DType()))
}

// TrainingStep logs train_loss (and the progress bar shows it) and the
// epoch's train_acc, and returns the loss.
func TrainingStep(s *volt.Step, b volt.Batch, logits LogitsFn) *graph.Node {
	l, acc := lossAndAccuracy(s, b, logits)
	s.Log("train_loss", l, volt.ProgBar)
	s.Log("train_acc", acc, volt.OnEpoch(true))
	return l
}

// ValidationStep logs val_loss and val_acc.
func ValidationStep(s *volt.Step, b volt.Batch, logits LogitsFn) {
	l, acc := lossAndAccuracy(s, b, logits)
	s.Log("val_loss", l, volt.ProgBar)
	s.Log("val_acc", acc, volt.ProgBar)
}

// TestStep logs test_loss and test_acc.
func TestStep(s *volt.Step, b volt.Batch, logits LogitsFn) {
	l, acc := lossAndAccuracy(s, b, logits)
	s.Log("test_loss", l)
	s.Log("test_acc", acc)
}

// PredictStep returns the predicted class of each image.
func PredictStep(s *volt.Step, b volt.Batch, logits LogitsFn) *graph.Node {
	return graph.ArgMax(logits(s, b.Input(0)), -1, dtypes.Int32)
}
