package metrics

import (
	"math"
	"slices"
	"sort"
)

// exactCurve is torchmetrics' _binary_clf_curve: scores sorted in
// descending order and, at each distinct score, the false and true positives
// among the samples scored at or above it.
func exactCurve(scores []float64, positive []bool) classCurve {
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	var cc classCurve
	tp := 0.0
	for j, i := range order {
		if positive[i] {
			tp++
			cc.support++
		}
		last := j == len(order)-1
		if last || scores[order[j+1]] != scores[i] {
			cc.tps = append(cc.tps, tp)
			cc.fps = append(cc.fps, float64(j+1)-tp)
			cc.thresholds = append(cc.thresholds, scores[i])
		}
	}
	return cc
}

// roc returns the ROC curve of one class as torchmetrics' _binary_roc_compute
// does: increasing false positive rate.
func (cc classCurve) roc(binned bool) Curve {
	if binned {
		n := len(cc.tps)
		fpr, tpr, th := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range n {
			j := n - 1 - i
			tpr[i] = safeDivide(cc.tps[j], cc.tps[j]+cc.fns[j])
			fpr[i] = safeDivide(cc.fps[j], cc.fps[j]+cc.tns[j])
			th[i] = cc.thresholds[j]
		}
		return Curve{X: fpr, Y: tpr, Thresholds: th}
	}
	tps := append([]float64{0}, cc.tps...)
	fps := append([]float64{0}, cc.fps...)
	th := append([]float64{1}, cc.thresholds...)
	rate := func(xs []float64) []float64 {
		out := make([]float64, len(xs))
		if last := xs[len(xs)-1]; last > 0 { // else torchmetrics warns and returns zeros
			for i, x := range xs {
				out[i] = x / last
			}
		}
		return out
	}
	return Curve{X: rate(fps), Y: rate(tps), Thresholds: th}
}

// pr returns the precision-recall curve of one class as torchmetrics'
// _binary_precision_recall_curve_compute does: X precision, Y recall, ending
// at (1, 0).
func (cc classCurve) pr(binned bool) Curve {
	n := len(cc.tps)
	precision, recall := make([]float64, 0, n+1), make([]float64, 0, n+1)
	var th []float64
	if binned {
		for i := range n {
			precision = append(precision, safeDivide(cc.tps[i], cc.tps[i]+cc.fps[i]))
			recall = append(recall, safeDivide(cc.tps[i], cc.tps[i]+cc.fns[i]))
		}
		th = slices.Clone(cc.thresholds)
	} else {
		total := 0.0
		if n > 0 {
			total = cc.tps[n-1]
		}
		for i := n - 1; i >= 0; i-- {
			precision = append(precision, cc.tps[i]/(cc.tps[i]+cc.fps[i]))
			recall = append(recall, cc.tps[i]/total) // NaN without positives, as in torchmetrics
			th = append(th, cc.thresholds[i])
		}
	}
	return Curve{X: append(precision, 1), Y: append(recall, 0), Thresholds: th}
}

// trapezoid is torch.trapz(y, x).
func trapezoid(x, y []float64) float64 {
	area := 0.0
	for i := 1; i < len(x); i++ {
		area += (x[i] - x[i-1]) * (y[i] + y[i-1]) / 2
	}
	return area
}

// averagePrecision is -Σ (recall[i+1] - recall[i]) · precision[i] over a
// precision-recall curve.
func averagePrecision(c Curve) float64 {
	ap := 0.0
	for i := 1; i < len(c.Y); i++ {
		ap -= (c.Y[i] - c.Y[i-1]) * c.X[i-1]
	}
	return ap
}

// reduceClassScores averages per-class scores as torchmetrics'
// _reduce_auroc and _reduce_average_precision: NaN classes are left out of
// Macro and Weighted.
func reduceClassScores(avg Average, scores, support []float64) Value {
	switch avg {
	case NoAverage:
		return vector(scores)
	case Weighted:
		total := 0.0
		for i, s := range scores {
			if !math.IsNaN(s) {
				total += support[i]
			}
		}
		v := 0.0
		for i, s := range scores {
			if !math.IsNaN(s) {
				v += s * safeDivide(support[i], total)
			}
		}
		return scalar(v)
	}
	v, n := 0.0, 0.0
	for _, s := range scores {
		if !math.IsNaN(s) {
			v += s
			n++
		}
	}
	return scalar(v / n)
}
