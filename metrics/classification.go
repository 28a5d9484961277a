package metrics

import (
	"fmt"

	"github.com/gomlx/gomlx/core/tensors"
)

// StatScoresMetric is a classification metric computed from per-class counts
// of true/false positives/negatives: Accuracy, Precision, Recall, FBeta (F1)
// and Specificity. Every StatScoresMetric of one Task shares its state in a
// Collection, whatever its Average.
type StatScoresMetric struct {
	statScores
	name           string
	average        Average
	micro, perItem scoreFunc
}

// Average returns how the metric combines per-class scores.
func (m *StatScoresMetric) Average() Average { return m.average }

// String names the metric, its task and average.
func (m *StatScoresMetric) String() string {
	return fmt.Sprintf("%s(%s, %s)", m.name, m.task.key(), m.average)
}

// Compute implements Metric.
func (m *StatScoresMetric) Compute(state []*tensors.Tensor) (Value, error) {
	return reduceScores(m.task, m.average, state, m.micro, m.perItem), nil
}

func newStatScoresMetric(name string, task Task, avg Average, micro, perItem scoreFunc) (*StatScoresMetric, error) {
	if err := task.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := avg.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &StatScoresMetric{statScores: statScores{task: task}, name: name, average: avg, micro: micro, perItem: perItem}, nil
}

// NewAccuracy returns torchmetrics' Accuracy: (TP+TN)/all for binary and
// multilabel, TP/(TP+FN) per class for multiclass (micro: the fraction of
// samples whose label is among the top-k predictions).
func NewAccuracy(task Task, avg Average) (*StatScoresMetric, error) {
	all := func(tp, fp, tn, fn float64) float64 { return safeDivide(tp+tn, tp+tn+fp+fn) }
	recall := func(tp, _, _, fn float64) float64 { return safeDivide(tp, tp+fn) }
	if task.Kind == MulticlassTask {
		return newStatScoresMetric("Accuracy", task, avg, recall, recall)
	}
	return newStatScoresMetric("Accuracy", task, avg, all, all)
}

// NewPrecision returns torchmetrics' Precision: TP/(TP+FP).
func NewPrecision(task Task, avg Average) (*StatScoresMetric, error) {
	f := func(tp, fp, _, _ float64) float64 { return safeDivide(tp, tp+fp) }
	return newStatScoresMetric("Precision", task, avg, f, f)
}

// NewRecall returns torchmetrics' Recall: TP/(TP+FN).
func NewRecall(task Task, avg Average) (*StatScoresMetric, error) {
	f := func(tp, _, _, fn float64) float64 { return safeDivide(tp, tp+fn) }
	return newStatScoresMetric("Recall", task, avg, f, f)
}

// NewFBeta returns torchmetrics' FBetaScore:
// (1+β²)TP / ((1+β²)TP + β²FN + FP).
func NewFBeta(task Task, beta float64, avg Average) (*StatScoresMetric, error) {
	if !(beta > 0) {
		return nil, fmt.Errorf("FBeta: beta = %v, want a value above 0", beta)
	}
	b2 := beta * beta
	f := func(tp, fp, _, fn float64) float64 { return safeDivide((1+b2)*tp, (1+b2)*tp+b2*fn+fp) }
	name := "FBeta"
	if beta == 1 {
		name = "F1"
	}
	return newStatScoresMetric(name, task, avg, f, f)
}

// NewF1 returns torchmetrics' F1Score, FBeta with β = 1.
func NewF1(task Task, avg Average) (*StatScoresMetric, error) { return NewFBeta(task, 1, avg) }

// NewSpecificity returns torchmetrics' Specificity: TN/(TN+FP).
func NewSpecificity(task Task, avg Average) (*StatScoresMetric, error) {
	f := func(_, fp, tn, _ float64) float64 { return safeDivide(tn, tn+fp) }
	return newStatScoresMetric("Specificity", task, avg, f, f)
}
