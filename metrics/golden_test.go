package metrics

import (
	"fmt"
	"testing"
)

// goldenMetric builds the volt metric of one golden case.
type goldenMetric struct {
	build    func() (Metric, error)
	noTarget bool // Update gets preds only (torchmetrics' update(value))
}

// ok wraps a metric that cannot fail to build.
func ok(m Metric) func() (Metric, error) { return func() (Metric, error) { return m, nil } }

// as adapts a typed constructor.
func as[M Metric](m M, err error) func() (Metric, error) {
	return func() (Metric, error) { return m, err }
}

const nc = 4 // classes and labels in gen_goldens.py

// goldenMetrics maps every case of testdata/goldens.json to volt's metric;
// the names follow gen_goldens.py.
func goldenMetrics() map[string]goldenMetric {
	m := map[string]goldenMetric{
		"mean":                              {build: ok(MeanMetric{})},
		"mean_unweighted_nan":               {build: ok(MeanMetric{}), noTarget: true},
		"sum":                               {build: ok(SumMetric{}), noTarget: true},
		"max":                               {build: ok(MaxMetric{}), noTarget: true},
		"min":                               {build: ok(MinMetric{}), noTarget: true},
		"cat":                               {build: ok(CatMetric{}), noTarget: true},
		"mse":                               {build: ok(MeanSquaredError{})},
		"rmse":                              {build: ok(MeanSquaredError{Root: true})},
		"mae":                               {build: ok(MeanAbsoluteError{})},
		"r2":                                {build: ok(R2Score{})},
		"r2_raw_2d":                         {build: ok(R2Score{NumOutputs: 3, Multioutput: RawValues})},
		"r2_variance_weighted_2d":           {build: ok(R2Score{NumOutputs: 3, Multioutput: VarianceWeighted})},
		"r2_adjusted":                       {build: ok(R2Score{Adjusted: 2})},
		"pearson_2d":                        {build: ok(PearsonCorrCoef{NumOutputs: 3})},
		"explained_variance_weighted_2d":    {build: ok(ExplainedVariance{NumOutputs: 3, Multioutput: VarianceWeighted})},
		"mse_2d":                            {build: ok(MeanSquaredError{})},
		"pearson":                           {build: ok(PearsonCorrCoef{})},
		"explained_variance":                {build: ok(ExplainedVariance{})},
		"explained_variance_raw_2d":         {build: ok(ExplainedVariance{NumOutputs: 3, Multioutput: RawValues})},
		"binary_accuracy_threshold":         {build: as(NewAccuracy(Binary().WithThreshold(0.3), Macro))},
		"binary_f1_ignore":                  {build: as(NewF1(Binary().WithIgnoreIndex(-1), Macro))},
		"binary_precision_all_one_class":    {build: as(NewPrecision(Binary(), Macro))},
		"binary_specificity_all_one_class":  {build: as(NewSpecificity(Binary(), Macro))},
		"binary_confmat":                    {build: as(NewConfusionMatrix(Binary(), NoNormalize))},
		"binary_confmat_true":               {build: as(NewConfusionMatrix(Binary(), NormalizeTrue))},
		"mc_confmat":                        {build: as(NewConfusionMatrix(Multiclass(nc), NoNormalize))},
		"mc_confmat_true":                   {build: as(NewConfusionMatrix(Multiclass(nc), NormalizeTrue))},
		"mc_confmat_pred":                   {build: as(NewConfusionMatrix(Multiclass(nc), NormalizePred))},
		"mc_confmat_all":                    {build: as(NewConfusionMatrix(Multiclass(nc), NormalizeAll))},
		"mc_confmat_ignore":                 {build: as(NewConfusionMatrix(Multiclass(nc).WithIgnoreIndex(-100), NoNormalize))},
		"ml_recall_ignore_macro":            {build: as(NewRecall(Multilabel(nc).WithIgnoreIndex(-1), Macro))},
		"ml_confmat":                        {build: as(NewConfusionMatrix(Multilabel(nc), NoNormalize))},
		"binary_auroc_thresholds_list":      {build: as(NewAUROC(Binary(), Macro, []float64{0, 0.2, 0.45, 0.7, 1}))},
		"binary_roc_ties_exact":             {build: as(NewROC(Binary(), nil))},
		"binary_pr_curve_ties_exact":        {build: as(NewPrecisionRecallCurve(Binary(), nil))},
		"binary_auroc_ties_exact":           {build: as(NewAUROC(Binary(), Macro, nil))},
		"binary_roc_binned_100":             {build: as(NewROC(Binary(), Linspace(100)))},
		"binary_auroc_all_one_class_exact":  {build: as(NewAUROC(Binary(), Macro, nil))},
		"binary_auroc_all_one_class_binned": {build: as(NewAUROC(Binary(), Macro, Linspace(11)))},
		"binary_ap_all_one_class_exact":     {build: as(NewAveragePrecision(Binary(), Macro, nil))},
		"binary_ap_all_one_class_binned":    {build: as(NewAveragePrecision(Binary(), Macro, Linspace(11)))},
		"binary_confmat_logit_ignore":       {build: as(NewConfusionMatrix(Binary().WithIgnoreIndex(-1), NoNormalize))},
		"binary_confmat_ignored_logit":      {build: as(NewConfusionMatrix(Binary().WithIgnoreIndex(-1), NoNormalize))},
		"binary_accuracy_ignored_logit":     {build: as(NewAccuracy(Binary().WithIgnoreIndex(-1), Macro))},
		"ml_confmat_ignore":                 {build: as(NewConfusionMatrix(Multilabel(nc).WithIgnoreIndex(-1), NoNormalize))},
		"ml_auroc_ignored_logit_binned":     {build: as(NewAUROC(Multilabel(nc).WithIgnoreIndex(-1), Macro, Linspace(11)))},
		"binary_auroc_ignored_logit_binned": {build: as(NewAUROC(Binary().WithIgnoreIndex(-1), Macro, Linspace(11)))},
		"binary_auroc_max_fpr_0.1_binned":   {build: as(NewPartialAUROC(Binary(), 0.1, Linspace(11)))},
		"binary_auroc_max_fpr_0.8_binned":   {build: as(NewPartialAUROC(Binary(), 0.8, Linspace(11)))},
		"mc_calibration_ignore":             {build: as(NewCalibrationError(Multiclass(nc).WithIgnoreIndex(-100), 15, NormL1))},
	}
	for _, kind := range []string{"binary_prob", "binary_logit"} {
		m["binary_accuracy_"+kind] = goldenMetric{build: as(NewAccuracy(Binary(), Macro))}
		m["binary_precision_"+kind] = goldenMetric{build: as(NewPrecision(Binary(), Macro))}
		m["binary_recall_"+kind] = goldenMetric{build: as(NewRecall(Binary(), Macro))}
		m["binary_f1_"+kind] = goldenMetric{build: as(NewF1(Binary(), Macro))}
		m["binary_fbeta2_"+kind] = goldenMetric{build: as(NewFBeta(Binary(), 2, Macro))}
		m["binary_specificity_"+kind] = goldenMetric{build: as(NewSpecificity(Binary(), Macro))}
	}
	for _, avg := range []Average{Micro, Macro, Weighted, NoAverage} {
		a := avg.String()
		mc := Multiclass(nc)
		m["mc_accuracy_"+a] = goldenMetric{build: as(NewAccuracy(mc, avg))}
		m["mc_precision_"+a] = goldenMetric{build: as(NewPrecision(mc, avg))}
		m["mc_recall_"+a] = goldenMetric{build: as(NewRecall(mc, avg))}
		m["mc_f1_"+a] = goldenMetric{build: as(NewF1(mc, avg))}
		m["mc_specificity_"+a] = goldenMetric{build: as(NewSpecificity(mc, avg))}
		m["mc_f1_top2_"+a] = goldenMetric{build: as(NewF1(mc.WithTopK(2), avg))}
		m["mc_accuracy_top2_"+a] = goldenMetric{build: as(NewAccuracy(mc.WithTopK(2), avg))}
		m["mc_f1_ignore_"+a] = goldenMetric{build: as(NewF1(mc.WithIgnoreIndex(-100), avg))}
		m["mc_recall_ignore_in_range_"+a] = goldenMetric{build: as(NewRecall(mc.WithIgnoreIndex(1), avg))}
		m["mc_fbeta05_"+a] = goldenMetric{build: as(NewFBeta(mc, 0.5, avg))}
		m["mc_precision_labels_"+a] = goldenMetric{build: as(NewPrecision(mc, avg))}
		ml := Multilabel(nc)
		m["ml_accuracy_"+a] = goldenMetric{build: as(NewAccuracy(ml, avg))}
		m["ml_f1_"+a] = goldenMetric{build: as(NewF1(ml, avg))}
		m["ml_precision_"+a] = goldenMetric{build: as(NewPrecision(ml, avg))}
		m["ml_specificity_"+a] = goldenMetric{build: as(NewSpecificity(ml, avg))}
	}
	for _, th := range []struct {
		tag        string
		thresholds []float64
	}{{"exact", nil}, {"binned", Linspace(11)}} {
		t := th.thresholds
		m["binary_auroc_"+th.tag] = goldenMetric{build: as(NewAUROC(Binary(), Macro, t))}
		m["binary_auroc_logit_"+th.tag] = goldenMetric{build: as(NewAUROC(Binary(), Macro, t))}
		m["binary_auroc_ignore_"+th.tag] = goldenMetric{build: as(NewAUROC(Binary().WithIgnoreIndex(-1), Macro, t))}
		m["binary_ap_"+th.tag] = goldenMetric{build: as(NewAveragePrecision(Binary(), Macro, t))}
		m["binary_roc_"+th.tag] = goldenMetric{build: as(NewROC(Binary(), t))}
		m["binary_pr_curve_"+th.tag] = goldenMetric{build: as(NewPrecisionRecallCurve(Binary(), t))}
		for _, avg := range []Average{Macro, Weighted, NoAverage} {
			m[fmt.Sprintf("mc_auroc_%s_%s", avg, th.tag)] = goldenMetric{build: as(NewAUROC(Multiclass(nc), avg, t))}
			m[fmt.Sprintf("mc_ap_%s_%s", avg, th.tag)] = goldenMetric{build: as(NewAveragePrecision(Multiclass(nc), avg, t))}
		}
		ml := Multilabel(nc)
		for _, avg := range []Average{Micro, Macro, Weighted, NoAverage} {
			m[fmt.Sprintf("ml_auroc_%s_%s", avg, th.tag)] = goldenMetric{build: as(NewAUROC(ml, avg, t))}
			m[fmt.Sprintf("ml_ap_%s_%s", avg, th.tag)] = goldenMetric{build: as(NewAveragePrecision(ml, avg, t))}
		}
		m["ml_roc_"+th.tag] = goldenMetric{build: as(NewROC(ml, t))}
		m["ml_pr_curve_"+th.tag] = goldenMetric{build: as(NewPrecisionRecallCurve(ml, t))}
		m["ml_auroc_ignore_"+th.tag] = goldenMetric{build: as(NewAUROC(ml.WithIgnoreIndex(-1), Macro, t))}
		m["ml_auroc_logit_"+th.tag] = goldenMetric{build: as(NewAUROC(ml, Macro, t))}
		m["binary_auroc_max_fpr_"+th.tag] = goldenMetric{build: as(NewPartialAUROC(Binary(), 0.3, t))}
		m["binary_auroc_max_fpr_logit_"+th.tag] = goldenMetric{build: as(NewPartialAUROC(Binary(), 0.55, t))}
		m["mc_auroc_prob_"+th.tag] = goldenMetric{build: as(NewAUROC(Multiclass(nc), Macro, t))}
		m["mc_roc_"+th.tag] = goldenMetric{build: as(NewROC(Multiclass(nc), t))}
		m["mc_pr_curve_"+th.tag] = goldenMetric{build: as(NewPrecisionRecallCurve(Multiclass(nc), t))}
		m["mc_auroc_ignore_"+th.tag] = goldenMetric{build: as(NewAUROC(Multiclass(nc).WithIgnoreIndex(-100), Macro, t))}
	}
	for _, norm := range []struct {
		name string
		norm CalibrationNorm
	}{{"l1", NormL1}, {"l2", NormL2}, {"max", NormMax}} {
		m["binary_calibration_"+norm.name] = goldenMetric{build: as(NewCalibrationError(Binary(), 5, norm.norm))}
		m["mc_calibration_"+norm.name] = goldenMetric{build: as(NewCalibrationError(Multiclass(nc), 6, norm.norm))}
	}
	return m
}

// TestGoldens runs every golden case's batches through the metric's compiled
// update, state in variables, and compares Compute with torchmetrics 1.2.1.
func TestGoldens(t *testing.T) {
	cases := loadGoldens(t)
	metrics := goldenMetrics()
	for name := range metrics {
		if _, found := cases[name]; !found {
			t.Errorf("metric %q has no golden case", name)
		}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			gm, found := metrics[name]
			if !found {
				t.Fatalf("golden case %q has no volt metric", name)
			}
			m, err := gm.build()
			if err != nil {
				t.Fatal(err)
			}
			state := runBatches(t, m, c.Batches, gm.noTarget)
			got, err := m.Compute(state.Tensors())
			if err != nil {
				t.Fatalf("Compute: %v", err)
			}
			checkValue(t, got, c)
		})
	}
}

// TestMergeEqualsUnion checks, for every golden case, that the state of the
// first batches merged with the state of the others (what data-parallel
// reduction does) computes torchmetrics' value for all of them.
func TestMergeEqualsUnion(t *testing.T) {
	cases := loadGoldens(t)
	metrics := goldenMetrics()
	for name, c := range cases {
		gm, found := metrics[name]
		if !found || len(c.Batches) < 2 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			m, err := gm.build()
			if err != nil {
				t.Fatal(err)
			}
			half := len(c.Batches) / 2
			a := runBatches(t, m, c.Batches[:half], gm.noTarget)
			b := runBatches(t, m, c.Batches[half:], gm.noTarget)
			if err := a.Merge(b); err != nil {
				t.Fatalf("Merge: %v", err)
			}
			got, err := m.Compute(a.Tensors())
			if err != nil {
				t.Fatalf("Compute: %v", err)
			}
			checkValue(t, got, c)
		})
	}
}
