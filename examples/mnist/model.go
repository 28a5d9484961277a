package main

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/metrics"
	"github.com/voltml/volt/optim"
)

// accuracy and macroF1 are the metrics the evaluation steps log. A metric is
// a description (its state is kept per logged name by the trainer), so one
// value serves validation and test alike.
var accuracy, macroF1 = mustMetric(metrics.NewAccuracy(metrics.Multiclass(10), metrics.Micro)),
	mustMetric(metrics.NewF1(metrics.Multiclass(10), metrics.Macro))

// mustMetric returns m, panicking on a constructor's error (fixed arguments).
func mustMetric(m *metrics.StatScoresMetric, err error) metrics.Metric {
	if err != nil {
		panic(err)
	}
	return m
}

// MLP classifies 28×28 digits with two hidden ReLU layers.
type MLP struct {
	Hidden []int   // hidden layer widths
	LR     float64 // Adam learning rate
}

// logits returns the [batch, 10] class scores of flattened images.
func (m *MLP) logits(s *volt.Step, images *graph.Node) *graph.Node {
	x := images
	for i, width := range m.Hidden {
		x = activation.Relu(layers.DenseWithBias(s.Scope().In("hidden_%d", i), x, width))
	}
	return layers.DenseWithBias(s.Scope().In("output"), x, 10)
}

// lossAndAccuracy returns the mean cross-entropy and the accuracy of a batch.
func (m *MLP) lossAndAccuracy(s *volt.Step, b volt.Batch) (*graph.Node, *graph.Node) {
	logits := m.logits(s, b.Input(0))
	labels := graph.ConvertDType(b.Label(0), dtypes.Int32)
	l := loss.SparseCategoricalCrossEntropyLogits([]*graph.Node{graph.ExpandAxes(labels, -1)}, []*graph.Node{logits})
	correct := graph.Equal(graph.ArgMax(logits, -1, dtypes.Int32), labels)
	acc := graph.ReduceAllMean(graph.ConvertDType(correct, logits.DType()))
	return l, acc
}

// TrainingStep implements volt.Module.
func (m *MLP) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l, acc := m.lossAndAccuracy(s, b)
	s.Log("train_loss", l, volt.ProgBar)
	s.Log("train_acc", acc, volt.OnEpoch(true))
	return l
}

// ValidationStep implements volt.ValidationStepper: the loss, and the
// accuracy and macro F1 of the whole validation set (metrics whose counts
// the compiled step accumulates).
func (m *MLP) ValidationStep(s *volt.Step, b volt.Batch) {
	logits, labels, l := m.evaluate(s, b)
	s.Log("val_loss", l, volt.ProgBar)
	s.LogMetric("val_acc", accuracy, logits, labels, volt.ProgBar)
	s.LogMetric("val_f1", macroF1, logits, labels)
}

// TestStep implements volt.TestStepper.
func (m *MLP) TestStep(s *volt.Step, b volt.Batch) {
	logits, labels, l := m.evaluate(s, b)
	s.Log("test_loss", l)
	s.LogMetric("test_acc", accuracy, logits, labels)
	s.LogMetric("test_f1", macroF1, logits, labels)
}

// evaluate returns a batch's logits, its labels as int32 and the mean
// cross-entropy.
func (m *MLP) evaluate(s *volt.Step, b volt.Batch) (logits, labels, l *graph.Node) {
	logits = m.logits(s, b.Input(0))
	labels = graph.ConvertDType(b.Label(0), dtypes.Int32)
	l = loss.SparseCategoricalCrossEntropyLogits([]*graph.Node{graph.ExpandAxes(labels, -1)}, []*graph.Node{logits})
	return logits, labels, l
}

// PredictStep implements volt.PredictStepper: the predicted class.
func (m *MLP) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return graph.ArgMax(m.logits(s, b.Input(0)), -1, dtypes.Int32)
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *MLP) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(m.LR)) }

// HParams implements volt.HParamser: recorded in hparams.yaml.
func (m *MLP) HParams() map[string]any { return map[string]any{"hidden": m.Hidden, "lr": m.LR} }
