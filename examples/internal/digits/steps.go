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
	"github.com/voltml/volt/metrics"
)

// LogitsFn computes the [batch, 10] class scores of flattened [batch, 784]
// images.
type LogitsFn func(s *volt.Step, images *graph.Node) *graph.Node

// accuracy and macroF1 are the metrics the evaluation steps log. A metric is
// a description (the trainer keeps its state per logged name), so one value
// serves validation and test alike.
var accuracy, macroF1 = mustMetric(metrics.NewAccuracy(metrics.Multiclass(10), metrics.Micro)),
	mustMetric(metrics.NewF1(metrics.Multiclass(10), metrics.Macro))

// confusion counts the test set's samples by true and predicted digit; a
// matrix is no scalar to log, so TestStep only updates it and the example
// reads it with Trainer.MetricValue("test_confmat").
var confusion = func() metrics.Metric {
	m, err := metrics.NewConfusionMatrix(metrics.Multiclass(10), metrics.NoNormalize)
	if err != nil {
		panic(err)
	}
	return m
}()

// mustMetric returns m, panicking on a constructor's error (fixed arguments).
func mustMetric(m *metrics.StatScoresMetric, err error) metrics.Metric {
	if err != nil {
		panic(err)
	}
	return m
}

// evaluate returns a batch's logits, its labels as int32 ([batch]) and the
// mean cross-entropy.
func evaluate(s *volt.Step, b volt.Batch, logitsOf LogitsFn) (logits, labels, l *graph.Node) {
	logits = logitsOf(s, b.Input(0))
	labels = s.ClassLabels(graph.ConvertDType(b.Label(0), dtypes.Int32), logits.Shape().Dimensions[1]) // checked with Config.DetectAnomaly
	l = loss.SparseCategoricalCrossEntropyLogits([]*graph.Node{graph.ExpandAxes(labels, -1)}, []*graph.Node{logits})
	return logits, labels, l
}

// lossAndAccuracy returns the mean cross-entropy and the accuracy of a batch.
func lossAndAccuracy(s *volt.Step, b volt.Batch, logitsOf LogitsFn) (*graph.Node, *graph.Node) {
	logits, labels, l := evaluate(s, b, logitsOf)
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

// ValidationStep logs val_loss, and the accuracy and macro F1 of the whole
// validation set as val_acc and val_f1 (metrics whose counts the compiled
// step accumulates).
func ValidationStep(s *volt.Step, b volt.Batch, logitsOf LogitsFn) {
	logits, labels, l := evaluate(s, b, logitsOf)
	s.Log("val_loss", l, volt.ProgBar, volt.SyncDist)
	s.LogMetric("val_acc", accuracy, logits, labels, volt.ProgBar)
	s.LogMetric("val_f1", macroF1, logits, labels)
}

// TestStep logs test_loss, test_acc and test_f1 (as ValidationStep), and
// accumulates the test set's confusion matrix as test_confmat.
func TestStep(s *volt.Step, b volt.Batch, logitsOf LogitsFn) {
	logits, labels, l := evaluate(s, b, logitsOf)
	s.Log("test_loss", l, volt.SyncDist)
	s.LogMetric("test_acc", accuracy, logits, labels)
	s.LogMetric("test_f1", macroF1, logits, labels)
	s.UpdateMetric("test_confmat", confusion, logits, labels)
}

// PredictStep returns the predicted class of each image.
func PredictStep(s *volt.Step, b volt.Batch, logits LogitsFn) *graph.Node {
	return graph.ArgMax(logits(s, b.Input(0)), -1, dtypes.Int32)
}
