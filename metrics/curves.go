package metrics

import (
	"fmt"

	"github.com/gomlx/gomlx/core/tensors"
)

// CurveMetric is a metric computed from the ROC or precision-recall curve of
// each class: ROC, PrecisionRecallCurve, AUROC and AveragePrecision of
// binary and multiclass tasks. thresholds nil keeps every score (exact curve;
// scores copied to the host each step, see curveState); a slice (e.g.
// Linspace(100)) bins them in a fixed-size state inside the compiled step.
// Curve metrics of one task and thresholds share their state in a Collection.
type CurveMetric struct {
	curveState
	name    string
	average Average
	compute func(m *CurveMetric, classes []classCurve, single bool) Value
}

// Compute implements Metric.
func (m *CurveMetric) Compute(state []*tensors.Tensor) (Value, error) {
	if m.average == Micro && m.task.Kind == MultilabelTask {
		return m.compute(m, []classCurve{m.micro(state)}, true), nil
	}
	return m.compute(m, m.perClass(state), m.task.Kind == BinaryTask), nil
}

// String names the metric and its configuration.
func (m *CurveMetric) String() string {
	return fmt.Sprintf("%s(%s)", m.name, m.StateKey())
}

func newCurveMetric(name string, task Task, avg Average, thresholds []float64,
	compute func(m *CurveMetric, classes []classCurve, single bool) Value) (*CurveMetric, error) {
	s, err := newCurveState(name, task, thresholds)
	if err != nil {
		return nil, err
	}
	if err := avg.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if avg == Micro && task.Kind == MulticlassTask {
		return nil, fmt.Errorf("%s: Average Micro is not defined for multiclass curves; want Macro, Weighted or NoAverage", name)
	}
	return &CurveMetric{curveState: s, name: name, average: avg, compute: compute}, nil
}

// NewROC returns torchmetrics' ROC: one curve per class (X false positive
// rate, Y true positive rate).
func NewROC(task Task, thresholds []float64) (*CurveMetric, error) {
	return newCurveMetric("ROC", task, Macro, thresholds, func(m *CurveMetric, classes []classCurve, _ bool) Value {
		var v Value
		for _, cc := range classes {
			v.Curves = append(v.Curves, cc.roc(m.binned()))
		}
		return v
	})
}

// NewPrecisionRecallCurve returns torchmetrics' PrecisionRecallCurve: one
// curve per class (X precision, Y recall).
func NewPrecisionRecallCurve(task Task, thresholds []float64) (*CurveMetric, error) {
	return newCurveMetric("PrecisionRecallCurve", task, Macro, thresholds, func(m *CurveMetric, classes []classCurve, _ bool) Value {
		var v Value
		for _, cc := range classes {
			v.Curves = append(v.Curves, cc.pr(m.binned()))
		}
		return v
	})
}

// NewAUROC returns torchmetrics' AUROC, the area under the ROC curve
// (multiclass: one-vs-rest per class, averaged as avg says; classes without
// positives score 0 in the exact form, as torchmetrics' do).
func NewAUROC(task Task, avg Average, thresholds []float64) (*CurveMetric, error) {
	return newCurveMetric("AUROC", task, avg, thresholds, func(m *CurveMetric, classes []classCurve, single bool) Value {
		scores, support := make([]float64, len(classes)), make([]float64, len(classes))
		for i, cc := range classes {
			c := cc.roc(m.binned())
			scores[i], support[i] = trapezoid(c.X, c.Y), cc.support
		}
		if single {
			return scalar(scores[0])
		}
		return reduceClassScores(m.average, scores, support)
	})
}

// NewAveragePrecision returns torchmetrics' AveragePrecision, the
// step-wise area under the precision-recall curve (classes without
// positives are NaN and left out of the average).
func NewAveragePrecision(task Task, avg Average, thresholds []float64) (*CurveMetric, error) {
	return newCurveMetric("AveragePrecision", task, avg, thresholds, func(m *CurveMetric, classes []classCurve, single bool) Value {
		scores, support := make([]float64, len(classes)), make([]float64, len(classes))
		for i, cc := range classes {
			scores[i], support[i] = averagePrecision(cc.pr(m.binned())), cc.support
		}
		if single {
			return scalar(scores[0])
		}
		return reduceClassScores(m.average, scores, support)
	})
}
