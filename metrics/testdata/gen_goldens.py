#!/usr/bin/env python3
"""Writes metrics/testdata/goldens.json: torchmetrics 1.2.1 values for volt's metrics.

Every case feeds the same fixed random batches (uneven sizes) to a torchmetrics
object with update() per batch and records compute(), so the golden is the value
of the state accumulated over all batches, not of one batch.

Run with Debian's python3-torch and torchmetrics 1.2.1 from
/work/shared/golden/lightning/lightning-2.2.5-site.tar.xz unpacked to $LSITE:

    PYTHONPATH=$LSITE /usr/bin/python3 metrics/testdata/gen_goldens.py

Inputs are float32 (what a model emits) and int64 labels; torchmetrics runs in
float32 as users run it.
"""
import json
import math
import os
import sys

import torch
import torchmetrics
from torchmetrics import aggregation, classification as C, regression as R

assert torchmetrics.__version__ == "1.2.1", torchmetrics.__version__

SIZES = [7, 13, 5, 11]  # uneven batch sizes
NC = 4                  # classes / labels


def gen(seed, kind, **kw):
    """Returns batches of (preds, target) for one input kind."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for n in SIZES:
        if kind == "binary_prob":
            p = torch.rand(n, generator=g)
            t = torch.randint(0, 2, (n,), generator=g)
        elif kind == "binary_prob_ties":  # scores on a 0.1 grid: many ties
            p = torch.round(torch.rand(n, generator=g) * 10) / 10
            t = torch.randint(0, 2, (n,), generator=g)
        elif kind == "binary_logit":
            p = torch.randn(n, generator=g) * 3
            t = torch.randint(0, 2, (n,), generator=g)
        elif kind == "multiclass_logit":
            p = torch.randn(n, NC, generator=g) * 2
            # imbalanced labels; class NC-1 never present unless `all_classes`
            hi = NC if kw.get("all_classes") else NC - 1
            t = torch.randint(0, hi, (n,), generator=g)
            if not kw.get("all_classes"):
                p[:, NC - 1] -= 10  # ... and never predicted
            t[torch.rand(n, generator=g) < 0.4] = 0
        elif kind == "multiclass_prob":
            p = torch.softmax(torch.randn(n, NC, generator=g) * 2, 1)
            t = torch.randint(0, NC, (n,), generator=g)
        elif kind == "multiclass_labels":
            p = torch.randint(0, NC, (n,), generator=g)
            t = torch.randint(0, NC - 1, (n,), generator=g)
        elif kind == "multilabel_prob":
            p = torch.rand(n, NC, generator=g)
            t = torch.randint(0, 2, (n, NC), generator=g)
            t[:, NC - 1] = 0  # one label never positive
        elif kind == "multilabel_logit":
            p = torch.randn(n, NC, generator=g) * 3
            t = torch.randint(0, 2, (n, NC), generator=g)
        elif kind == "regression":
            t = torch.randn(n, generator=g) * 2 + 1
            p = t + torch.randn(n, generator=g) * 0.7
        elif kind == "regression2d":
            t = torch.randn(n, 3, generator=g) * 2 + 1
            p = t + torch.randn(n, 3, generator=g) * 0.7
        elif kind == "values":
            p = torch.randn(n, generator=g) * 5
            t = torch.rand(n, generator=g) + 0.5  # weights
            if kw.get("nan"):
                p[1] = float("nan")
        else:
            raise ValueError(kind)
        if kw.get("ignore") is not None:
            mask = torch.rand(t.shape, generator=g) < 0.2
            t = t.clone()
            t[mask] = kw["ignore"]
            if kw.get("ignored_logit"):  # only ignored samples have scores outside [0, 1]
                p = p.clone()
                p[mask] = 5.0
        if kw.get("all_one_class"):
            t = torch.ones_like(t)
        out.append((p.float() if p.is_floating_point() else p.long(), t))
    return out


def num(v):
    """A JSON number, or the string "NaN", "+Inf" or "-Inf" (JSON has none)."""
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return v


def flat(x):
    return [num(v) for v in x.double().flatten().tolist()]


def tensor_json(x):
    return {"dims": list(x.shape), "data": flat(x)}


CASES = []


def case(name, kind, make, call=None, seed=0, **kw):
    CASES.append((name, kind, make, call, seed, kw))


# aggregation: preds = value, target = weight (Mean only)
case("mean", "values", lambda: aggregation.MeanMetric(), call="weighted")
case("mean_unweighted_nan", "values", lambda: aggregation.MeanMetric(), call="value", nan=True)
case("sum", "values", lambda: aggregation.SumMetric(), call="value")
case("max", "values", lambda: aggregation.MaxMetric(), call="value")
case("min", "values", lambda: aggregation.MinMetric(), call="value")
case("cat", "values", lambda: aggregation.CatMetric(), call="value")

# regression
case("mse", "regression", lambda: R.MeanSquaredError())
case("rmse", "regression", lambda: R.MeanSquaredError(squared=False))
case("mae", "regression", lambda: R.MeanAbsoluteError())
case("r2", "regression", lambda: R.R2Score())
case("r2_raw_2d", "regression2d", lambda: R.R2Score(num_outputs=3, multioutput="raw_values"))
case("r2_variance_weighted_2d", "regression2d", lambda: R.R2Score(num_outputs=3, multioutput="variance_weighted"))
case("r2_adjusted", "regression", lambda: R.R2Score(adjusted=2))
case("pearson", "regression", lambda: R.PearsonCorrCoef())
case("pearson_2d", "regression2d", lambda: R.PearsonCorrCoef(num_outputs=3))
case("explained_variance_weighted_2d", "regression2d", lambda: R.ExplainedVariance(multioutput="variance_weighted"))
case("mse_2d", "regression2d", lambda: R.MeanSquaredError())
case("explained_variance", "regression", lambda: R.ExplainedVariance())
case("explained_variance_raw_2d", "regression2d", lambda: R.ExplainedVariance(multioutput="raw_values"))

# binary stat scores
for kind in ["binary_prob", "binary_logit"]:
    case(f"binary_accuracy_{kind}", kind, lambda: C.BinaryAccuracy())
    case(f"binary_precision_{kind}", kind, lambda: C.BinaryPrecision())
    case(f"binary_recall_{kind}", kind, lambda: C.BinaryRecall())
    case(f"binary_f1_{kind}", kind, lambda: C.BinaryF1Score())
    case(f"binary_fbeta2_{kind}", kind, lambda: C.BinaryFBetaScore(beta=2.0))
    case(f"binary_specificity_{kind}", kind, lambda: C.BinarySpecificity())
case("binary_accuracy_threshold", "binary_prob", lambda: C.BinaryAccuracy(threshold=0.3))
case("binary_f1_ignore", "binary_prob", lambda: C.BinaryF1Score(ignore_index=-1), ignore=-1)
case("binary_precision_all_one_class", "binary_prob", lambda: C.BinaryPrecision(), all_one_class=True)
case("binary_specificity_all_one_class", "binary_prob", lambda: C.BinarySpecificity(), all_one_class=True)
case("binary_confmat", "binary_prob", lambda: C.BinaryConfusionMatrix())
case("binary_confmat_true", "binary_prob", lambda: C.BinaryConfusionMatrix(normalize="true"))

# multiclass stat scores
for avg in ["micro", "macro", "weighted", "none"]:
    case(f"mc_accuracy_{avg}", "multiclass_logit", lambda avg=avg: C.MulticlassAccuracy(NC, average=avg))
    case(f"mc_precision_{avg}", "multiclass_logit", lambda avg=avg: C.MulticlassPrecision(NC, average=avg))
    case(f"mc_recall_{avg}", "multiclass_logit", lambda avg=avg: C.MulticlassRecall(NC, average=avg))
    case(f"mc_f1_{avg}", "multiclass_logit", lambda avg=avg: C.MulticlassF1Score(NC, average=avg))
    case(f"mc_specificity_{avg}", "multiclass_logit", lambda avg=avg: C.MulticlassSpecificity(NC, average=avg))
    case(f"mc_f1_top2_{avg}", "multiclass_logit", lambda avg=avg: C.MulticlassF1Score(NC, average=avg, top_k=2))
    case(f"mc_accuracy_top2_{avg}", "multiclass_logit", lambda avg=avg: C.MulticlassAccuracy(NC, average=avg, top_k=2))
    case(f"mc_f1_ignore_{avg}", "multiclass_logit", lambda avg=avg: C.MulticlassF1Score(NC, average=avg, ignore_index=-100), ignore=-100)
    case(f"mc_recall_ignore_in_range_{avg}", "multiclass_logit", lambda avg=avg: C.MulticlassRecall(NC, average=avg, ignore_index=1), ignore=1)
    case(f"mc_fbeta05_{avg}", "multiclass_logit", lambda avg=avg: C.MulticlassFBetaScore(beta=0.5, num_classes=NC, average=avg))
    case(f"mc_precision_labels_{avg}", "multiclass_labels", lambda avg=avg: C.MulticlassPrecision(NC, average=avg))
case("mc_confmat", "multiclass_logit", lambda: C.MulticlassConfusionMatrix(NC))
for norm in ["true", "pred", "all"]:
    case(f"mc_confmat_{norm}", "multiclass_logit", lambda norm=norm: C.MulticlassConfusionMatrix(NC, normalize=norm))
case("mc_confmat_ignore", "multiclass_logit", lambda: C.MulticlassConfusionMatrix(NC, ignore_index=-100), ignore=-100)

# multilabel stat scores
for avg in ["micro", "macro", "weighted", "none"]:
    case(f"ml_accuracy_{avg}", "multilabel_prob", lambda avg=avg: C.MultilabelAccuracy(NC, average=avg))
    case(f"ml_f1_{avg}", "multilabel_prob", lambda avg=avg: C.MultilabelF1Score(NC, average=avg))
    case(f"ml_precision_{avg}", "multilabel_prob", lambda avg=avg: C.MultilabelPrecision(NC, average=avg))
    case(f"ml_specificity_{avg}", "multilabel_prob", lambda avg=avg: C.MultilabelSpecificity(NC, average=avg))
case("ml_recall_ignore_macro", "multilabel_prob", lambda: C.MultilabelRecall(NC, ignore_index=-1), ignore=-1)
case("ml_confmat", "multilabel_prob", lambda: C.MultilabelConfusionMatrix(NC))

# curves and areas: exact (thresholds=None) and binned
for th, tag in [(None, "exact"), (11, "binned")]:
    case(f"binary_auroc_{tag}", "binary_prob", lambda th=th: C.BinaryAUROC(thresholds=th))
    case(f"binary_auroc_logit_{tag}", "binary_logit", lambda th=th: C.BinaryAUROC(thresholds=th))
    case(f"binary_auroc_ignore_{tag}", "binary_prob", lambda th=th: C.BinaryAUROC(thresholds=th, ignore_index=-1), ignore=-1)
    case(f"binary_ap_{tag}", "binary_prob", lambda th=th: C.BinaryAveragePrecision(thresholds=th))
    case(f"binary_roc_{tag}", "binary_prob", lambda th=th: C.BinaryROC(thresholds=th))
    case(f"binary_pr_curve_{tag}", "binary_prob", lambda th=th: C.BinaryPrecisionRecallCurve(thresholds=th))
    for avg in ["macro", "weighted", "none"]:
        case(f"mc_auroc_{avg}_{tag}", "multiclass_logit", lambda th=th, avg=avg: C.MulticlassAUROC(NC, average=avg, thresholds=th), all_classes=True)
        case(f"mc_ap_{avg}_{tag}", "multiclass_logit", lambda th=th, avg=avg: C.MulticlassAveragePrecision(NC, average=avg, thresholds=th))
    case(f"mc_auroc_prob_{tag}", "multiclass_prob", lambda th=th: C.MulticlassAUROC(NC, thresholds=th))
    case(f"mc_roc_{tag}", "multiclass_logit", lambda th=th: C.MulticlassROC(NC, thresholds=th), all_classes=True)
    case(f"mc_pr_curve_{tag}", "multiclass_logit", lambda th=th: C.MulticlassPrecisionRecallCurve(NC, thresholds=th), all_classes=True)
    case(f"mc_auroc_ignore_{tag}", "multiclass_logit", lambda th=th: C.MulticlassAUROC(NC, thresholds=th, ignore_index=-100), ignore=-100, all_classes=True)
case("binary_roc_ties_exact", "binary_prob_ties", lambda: C.BinaryROC())
case("binary_pr_curve_ties_exact", "binary_prob_ties", lambda: C.BinaryPrecisionRecallCurve())
case("binary_auroc_ties_exact", "binary_prob_ties", lambda: C.BinaryAUROC())
case("binary_roc_binned_100", "binary_prob", lambda: C.BinaryROC(thresholds=100))
for th, tag in [(None, "exact"), (11, "binned")]:
    case(f"binary_auroc_all_one_class_{tag}", "binary_prob", lambda th=th: C.BinaryAUROC(thresholds=th), all_one_class=True)
    case(f"binary_ap_all_one_class_{tag}", "binary_prob", lambda th=th: C.BinaryAveragePrecision(thresholds=th), all_one_class=True)
case("binary_confmat_logit_ignore", "binary_logit", lambda: C.BinaryConfusionMatrix(ignore_index=-1), ignore=-1)
case("binary_confmat_ignored_logit", "binary_prob", lambda: C.BinaryConfusionMatrix(ignore_index=-1), ignore=-1, ignored_logit=True)
case("binary_accuracy_ignored_logit", "binary_prob", lambda: C.BinaryAccuracy(ignore_index=-1), ignore=-1, ignored_logit=True)
case("ml_confmat_ignore", "multilabel_prob", lambda: C.MultilabelConfusionMatrix(NC, ignore_index=-1), ignore=-1)
for th, tag in [(None, "exact"), (11, "binned")]:
    for avg in ["micro", "macro", "weighted", "none"]:
        case(f"ml_auroc_{avg}_{tag}", "multilabel_prob", lambda th=th, avg=avg: C.MultilabelAUROC(NC, average=avg, thresholds=th))
        case(f"ml_ap_{avg}_{tag}", "multilabel_prob", lambda th=th, avg=avg: C.MultilabelAveragePrecision(NC, average=avg, thresholds=th))
    case(f"ml_roc_{tag}", "multilabel_prob", lambda th=th: C.MultilabelROC(NC, thresholds=th))
    case(f"ml_pr_curve_{tag}", "multilabel_prob", lambda th=th: C.MultilabelPrecisionRecallCurve(NC, thresholds=th))
    case(f"ml_auroc_ignore_{tag}", "multilabel_prob", lambda th=th: C.MultilabelAUROC(NC, thresholds=th, ignore_index=-1), ignore=-1)
    case(f"ml_auroc_logit_{tag}", "multilabel_logit", lambda th=th: C.MultilabelAUROC(NC, thresholds=th))
case("ml_auroc_ignored_logit_binned", "multilabel_prob", lambda: C.MultilabelAUROC(NC, thresholds=11, ignore_index=-1), ignore=-1, ignored_logit=True)
case("binary_auroc_ignored_logit_binned", "binary_prob", lambda: C.BinaryAUROC(thresholds=11, ignore_index=-1), ignore=-1, ignored_logit=True)
for th, tag in [(None, "exact"), (11, "binned")]:
    case(f"binary_auroc_max_fpr_{tag}", "binary_prob", lambda th=th: C.BinaryAUROC(max_fpr=0.3, thresholds=th))
    case(f"binary_auroc_max_fpr_logit_{tag}", "binary_logit", lambda th=th: C.BinaryAUROC(max_fpr=0.55, thresholds=th))
for f in [0.1, 0.8]:
    case(f"binary_auroc_max_fpr_{f}_binned", "binary_prob", lambda f=f: C.BinaryAUROC(max_fpr=f, thresholds=11))
case("binary_auroc_thresholds_list", "binary_prob", lambda: C.BinaryAUROC(thresholds=[0.0, 0.2, 0.45, 0.7, 1.0]))

# calibration
for norm in ["l1", "l2", "max"]:
    case(f"binary_calibration_{norm}", "binary_prob", lambda norm=norm: C.BinaryCalibrationError(n_bins=5, norm=norm))
    case(f"mc_calibration_{norm}", "multiclass_logit", lambda norm=norm: C.MulticlassCalibrationError(NC, n_bins=6, norm=norm))
case("mc_calibration_ignore", "multiclass_logit", lambda: C.MulticlassCalibrationError(NC, n_bins=15, ignore_index=-100), ignore=-100)


def result_json(res):
    if isinstance(res, tuple):  # curves: (x0, x1, thresholds)
        a, b, th = res
        if isinstance(a, list):
            return {"curves": [[flat(x.double()), flat(y.double()), flat(t.double())] for x, y, t in zip(a, b, th)]}
        if a.ndim == 2:
            return {"curves": [[flat(a[i].double()), flat(b[i].double()), flat(th.double())] for i in range(a.shape[0])]}
        return {"curves": [[flat(a.double()), flat(b.double()), flat(th.double())]]}
    return {"value": tensor_json(res)}


def main():
    out = {"generator": "metrics/testdata/gen_goldens.py", "torchmetrics": torchmetrics.__version__,
           "torch": torch.__version__, "cases": []}
    for i, (name, kind, make, call, seed, kw) in enumerate(CASES):
        batches = gen(1000 + i, kind, **kw)
        m = make()
        for p, t in batches:
            if call == "weighted":
                m.update(p, t)
            elif call == "value":
                m.update(p)
            else:
                m.update(p, t)
        res = m.compute()
        entry = {"name": name, "batches": [{"preds": tensor_json(p), "target": tensor_json(t),
                                            "preds_int": not p.is_floating_point(),
                                            "target_int": not t.is_floating_point()} for p, t in batches]}
        entry.update(result_json(res))
        out["cases"].append(entry)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {len(out['cases'])} cases to {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
