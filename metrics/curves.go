package metrics

import (
	"fmt"
	"slices"

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

// NewPartialAUROC returns torchmetrics' binary AUROC with max_fpr: the area
// under the ROC curve up to false positive rate maxFPR (in (0, 1]),
// McClish-standardised so that 0.5 is chance and 1 is perfect.
func NewPartialAUROC(task Task, maxFPR float64, thresholds []float64) (*CurveMetric, error) {
	if task.Kind != BinaryTask {
		return nil, fmt.Errorf("PartialAUROC: Task.Kind %s, want binary (torchmetrics' max_fpr is binary only)", task.Kind)
	}
	if !(maxFPR > 0 && maxFPR <= 1) {
		return nil, fmt.Errorf("PartialAUROC: maxFPR = %v, want a value in (0, 1]", maxFPR)
	}
	return newCurveMetric("PartialAUROC", task, Macro, thresholds, func(m *CurveMetric, classes []classCurve, _ bool) Value {
		return scalar(partialAUC(classes[0].roc(m.binned()), maxFPR))
	})
}

// partialAUC is torchmetrics' _binary_auroc_compute with max_fpr.
func partialAUC(c Curve, maxFPR float64) float64 {
	fpr, tpr := c.X, c.Y
	if maxFPR == 1 || sum(fpr) == 0 || sum(tpr) == 0 {
		return trapezoid(fpr, tpr)
	}
	stop := 0 // number of points with fpr <= maxFPR (torch.bucketize, right=True)
	for stop < len(fpr) && fpr[stop] <= maxFPR {
		stop++
	}
	weight := (maxFPR - fpr[stop-1]) / (fpr[stop] - fpr[stop-1])
	interpolated := tpr[stop-1] + weight*(tpr[stop]-tpr[stop-1])
	x := append(slices.Clone(fpr[:stop]), maxFPR)
	y := append(slices.Clone(tpr[:stop]), interpolated)
	minArea := 0.5 * maxFPR * maxFPR
	return 0.5 * (1 + (trapezoid(x, y)-minArea)/(maxFPR-minArea))
}
