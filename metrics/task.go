package metrics

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
)

// TaskKind is the kind of classification problem, as torchmetrics' `task`.
type TaskKind int

const (
	// BinaryTask: preds [N, ...] scores (probabilities or logits) or 0/1
	// labels, target [N, ...] of 0/1.
	BinaryTask TaskKind = iota + 1
	// MulticlassTask: preds [N, C] scores or [N] labels, target [N] labels.
	MulticlassTask
	// MultilabelTask: preds [N, L] scores or 0/1 labels, target [N, L] of 0/1.
	MultilabelTask
)

// String returns the task's name as torchmetrics spells it.
func (k TaskKind) String() string {
	switch k {
	case BinaryTask:
		return "binary"
	case MulticlassTask:
		return "multiclass"
	case MultilabelTask:
		return "multilabel"
	}
	return fmt.Sprintf("TaskKind(%d)", int(k))
}

// Task configures a classification metric: its kind, number of classes or
// labels, and the input options torchmetrics takes. Build it with Binary,
// Multiclass or Multilabel and the With... methods.
//
// Scores outside [0, 1] are taken for logits, as torchmetrics does, per batch:
// sigmoid (binary, multilabel) or softmax (multiclass curves) is applied when
// any score of the batch lies outside [0, 1].
type Task struct {
	Kind TaskKind
	// NumClasses is the number of classes (multiclass) or labels
	// (multilabel); 1 for binary.
	NumClasses int
	// Threshold turns binary and multilabel scores into labels: a score above
	// it is positive (default 0.5).
	Threshold float64
	// TopK counts a multiclass sample as predicted for each of its TopK
	// highest scores (default 1).
	TopK int
	// IgnoreIndex, when HasIgnoreIndex, is a target value whose samples (or
	// multilabel elements) count nowhere.
	IgnoreIndex    int
	HasIgnoreIndex bool
}

// Classifier is implemented by the classification metrics (Accuracy and the
// other StatScoresMetric, ConfusionMatrix, CalibrationError, the curve
// metrics) and by a Collection of them: the tasks whose targets they read.
// The trainer checks a multiclass target against its task's classes, as
// PyTorch refuses a class index out of bounds.
type Classifier interface {
	Tasks() []Task
}

// Binary returns the binary task with threshold 0.5.
func Binary() Task { return Task{Kind: BinaryTask, NumClasses: 1, Threshold: 0.5, TopK: 1} }

// Multiclass returns the task of numClasses classes with top-1 predictions.
func Multiclass(numClasses int) Task {
	return Task{Kind: MulticlassTask, NumClasses: numClasses, Threshold: 0.5, TopK: 1}
}

// Multilabel returns the task of numLabels independent binary labels with
// threshold 0.5.
func Multilabel(numLabels int) Task {
	return Task{Kind: MultilabelTask, NumClasses: numLabels, Threshold: 0.5, TopK: 1}
}

// WithThreshold returns t with its threshold set.
func (t Task) WithThreshold(threshold float64) Task { t.Threshold = threshold; return t }

// WithTopK returns t with its top-k set (multiclass).
func (t Task) WithTopK(k int) Task { t.TopK = k; return t }

// WithIgnoreIndex returns t ignoring samples whose target is index.
func (t Task) WithIgnoreIndex(index int) Task {
	t.IgnoreIndex, t.HasIgnoreIndex = index, true
	return t
}

// Validate returns an error naming the first invalid field.
func (t Task) Validate() error {
	switch t.Kind {
	case BinaryTask:
		if t.NumClasses != 1 {
			return fmt.Errorf("Task.NumClasses = %d for a binary task, want 1 (use metrics.Binary())", t.NumClasses)
		}
	case MulticlassTask, MultilabelTask:
		if t.NumClasses < 2 {
			return fmt.Errorf("Task.NumClasses = %d for a %s task, want 2 or more", t.NumClasses, t.Kind)
		}
	default:
		return fmt.Errorf("Task.Kind = %v, want BinaryTask, MulticlassTask or MultilabelTask", t.Kind)
	}
	if t.Threshold < 0 || t.Threshold > 1 {
		return fmt.Errorf("Task.Threshold = %v, want a value in [0, 1]", t.Threshold)
	}
	if t.TopK < 1 || t.TopK > t.NumClasses && t.Kind == MulticlassTask {
		return fmt.Errorf("Task.TopK = %d, want 1 to NumClasses (%d)", t.TopK, t.NumClasses)
	}
	if t.TopK != 1 && t.Kind != MulticlassTask {
		return fmt.Errorf("Task.TopK = %d for a %s task, want 1 (top-k is for multiclass)", t.TopK, t.Kind)
	}
	return nil
}

// key identifies the task's input handling, for StateKey.
func (t Task) key() string {
	return fmt.Sprintf("%s/c=%d/thr=%v/k=%d/ignore=%v:%d", t.Kind, t.NumClasses, t.Threshold, t.TopK, t.HasIgnoreIndex, t.IgnoreIndex)
}

// labels returns target as int64 and the mask of its elements that count
// (not equal to the ignore index).
func (t Task) labels(target *graph.Node) (labels, valid *graph.Node) {
	labels = graph.ConvertDType(target, dtypes.Int64)
	if !t.HasIgnoreIndex {
		return labels, graph.OnesLike(graph.ConvertDType(labels, dtypes.Bool))
	}
	return labels, graph.NotEqual(labels, graph.Scalar(target.Graph(), dtypes.Int64, t.IgnoreIndex))
}

// inUnitRange returns a boolean scalar: whether every element of p where
// mask is true lies in [0, 1].
func inUnitRange(p, mask *graph.Node) *graph.Node {
	zero, one := graph.ScalarZero(p.Graph(), p.DType()), graph.ScalarOne(p.Graph(), p.DType())
	in := graph.LogicalAnd(graph.GreaterOrEqual(p, zero), graph.LessOrEqual(p, one))
	return graph.LogicalAll(graph.LogicalOr(in, graph.LogicalNot(mask)))
}

// sigmoidIfLogits applies the sigmoid to p unless every element of p where
// mask is true lies in [0, 1] (torchmetrics' per-batch logits detection).
func sigmoidIfLogits(p, mask *graph.Node) *graph.Node {
	return graph.Where(inUnitRange(p, mask), p, graph.Sigmoid(p))
}

// softmaxIfLogits applies the softmax over axis 1 to p ([N, C]) unless every
// score of the rows where rowMask ([N]) is true lies in [0, 1].
func softmaxIfLogits(p, rowMask *graph.Node) *graph.Node {
	mask := graph.BroadcastToShape(graph.InsertAxes(rowMask, -1), p.Shape())
	return graph.Where(inUnitRange(p, mask), p, graph.Softmax(p, 1))
}

// checkRank panics (at trace time) naming the metric when x's rank is not
// one of ranks.
func checkRank(metric, what string, x *graph.Node, ranks ...int) {
	for _, r := range ranks {
		if x.Rank() == r {
			return
		}
	}
	panic(fmt.Sprintf("%s: %s has shape %v, want rank %v", metric, what, x.Shape().Dimensions, ranks))
}
