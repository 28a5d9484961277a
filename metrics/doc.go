// Package metrics is a torchmetrics for volt: metrics whose state is
// accumulated inside the compiled training or evaluation step and turned into
// a value at the end of the epoch (F1 over every sample, AUROC over every
// score), not averaged over batches.
//
// Start with a constructor such as [NewAccuracy] or [NewF1] for a [Task]
// ([Binary], [Multiclass], [Multilabel]), logged from a step with
// volt.Step.LogMetric; every metric implements [Metric].
//
// A metric has three parts:
//
//   - States declares its state tensors (StateSpec: name, dtype, shape,
//     initial value, and how the state reduces across processes: ReduceSum,
//     ReduceMax, ReduceMin or ReduceCat).
//   - Update is graph code: given the nodes of the current state and of a
//     batch's preds and target, it returns the new state nodes. The engine
//     holds fixed-size states as variables set in the same compiled step, so
//     updating a metric costs no host transfer. ReduceCat states (CatMetric
//     and the exact, thresholds-nil curve metrics) are the exception: Update
//     returns the batch's rows, copied to the host into chunks of ChunkRows
//     rows each step.
//   - Compute runs on the host, once per epoch (or per logging), on the state
//     as plain tensors (float64 maths, exact for the sort-based curves and
//     free of another compiled graph). Reset re-initialises the state;
//     State.Checkpoint and State.Restore give it to checkpoints as tensors by
//     name; State.Merge is the data-parallel reduction done on the host, and
//     State.Pack / State.Unpack lay the fixed-size states out as one buffer
//     per (reduction, dtype) for one all-reduce call each across processes.
//
// Metrics: MeanMetric, SumMetric, MaxMetric, MinMetric, CatMetric;
// MeanSquaredError (RMSE with Root), MeanAbsoluteError, R2Score,
// PearsonCorrCoef, ExplainedVariance; for Binary, Multiclass (TopK) and
// Multilabel tasks with IgnoreIndex and Average Micro, Macro, Weighted or
// NoAverage: NewAccuracy, NewPrecision, NewRecall, NewF1, NewFBeta,
// NewSpecificity, NewConfusionMatrix, NewAUROC, NewAveragePrecision, NewROC,
// NewPrecisionRecallCurve (exact, or binned with thresholds such as
// Linspace(100)); NewPartialAUROC (max_fpr) for binary tasks;
// NewCalibrationError for binary and multiclass tasks.
// Every one is checked against torchmetrics 1.2.1 (testdata/gen_goldens.py).
//
// A Collection updates several metrics of the same inputs and shares work:
// Accuracy, Precision, Recall, F1 and Specificity of one Task keep one set of
// per-class counts; the curve metrics of one Task and thresholds keep one set
// of scores.
//
// A module logs a metric as Lightning users log torchmetrics objects:
//
//	type Classifier struct{ F1, Acc *metrics.StatScoresMetric }
//
//	func (m *Classifier) ValidationStep(s *volt.Step, b volt.Batch) {
//		logits := m.forward(s.Scope(), b.Input(0))
//		s.LogMetric("val_f1", m.F1, logits, b.Label(0))   // epoch value: F1 of the whole epoch
//		s.LogMetric("val_acc", m.Acc, logits, b.Label(0))
//	}
//
// (volt.Step.LogMetrics logs a Collection.) The trainer carries the
// fixed-size states as extra inputs and outputs of the compiled step, not as
// model variables (see volt's Step.LogMetric); it does not take ReduceCat
// states yet. Bind runs a metric against a model.Store instead, for code that
// drives GoMLX itself: Bound.Update inside the step's graph function (plus
// Bound.BatchState on steps that log the step value), Bound.State and the
// metric's Compute at epoch end, Bound.Reset before the next. See Example.
package metrics
