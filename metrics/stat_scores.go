package metrics

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// Average says how a classification metric combines per-class scores, as
// torchmetrics' `average` (binary tasks ignore it).
type Average int

const (
	// Macro is the unweighted mean over classes (torchmetrics' default). For
	// multiclass, classes never present nor predicted are left out.
	Macro Average = iota
	// Micro computes the score from the counts summed over classes.
	Micro
	// Weighted is the mean over classes weighted by their support.
	Weighted
	// NoAverage returns one score per class (torchmetrics' "none").
	NoAverage
)

// String returns the average's name as torchmetrics spells it.
func (a Average) String() string {
	switch a {
	case Macro:
		return "macro"
	case Micro:
		return "micro"
	case Weighted:
		return "weighted"
	case NoAverage:
		return "none"
	}
	return fmt.Sprintf("Average(%d)", int(a))
}

func (a Average) validate() error {
	if a < Macro || a > NoAverage {
		return fmt.Errorf("Average = %d, want Macro, Micro, Weighted or NoAverage", int(a))
	}
	return nil
}

// statScores is the state shared by Accuracy, Precision, Recall, FBeta and
// Specificity: per class (label; one for binary) counts of true positives,
// false positives, true negatives and false negatives, int64.
type statScores struct{ task Task }

// States implements Updater.
func (s statScores) States() []StateSpec {
	c := []int{s.task.NumClasses}
	spec := func(name string) StateSpec {
		return StateSpec{Name: name, DType: dtypes.Int64, Dims: c, Reduce: ReduceSum}
	}
	return []StateSpec{spec("tp"), spec("fp"), spec("tn"), spec("fn")}
}

// Tasks implements Classifier.
func (s statScores) Tasks() []Task { return []Task{s.task} }

// StateKey implements Shared: every stat-scores metric of one task shares
// the counts, whatever its average.
func (s statScores) StateKey() string { return "stat_scores/" + s.task.key() }

// Update implements Updater.
func (s statScores) Update(state []*graph.Node, preds, target *graph.Node) []*graph.Node {
	predPos, targetPos, valid := s.task.positives("stat scores", preds, target, false)
	// Every mask is [M, C]; the counts sum over M.
	count := func(a, b *graph.Node) *graph.Node {
		both := graph.LogicalAnd(graph.LogicalAnd(a, b), valid)
		return graph.ReduceSum(graph.ConvertDType(both, dtypes.Int64), 0)
	}
	predNeg, targetNeg := graph.LogicalNot(predPos), graph.LogicalNot(targetPos)
	return []*graph.Node{
		graph.Add(state[0], count(predPos, targetPos)),
		graph.Add(state[1], count(predPos, targetNeg)),
		graph.Add(state[2], count(predNeg, targetNeg)),
		graph.Add(state[3], count(predNeg, targetPos)),
	}
}

// positives returns, as [M, C] booleans (C = 1 for binary), which elements
// are predicted positive, which are positive in the target, and which count
// (not ignored; for binary and multilabel, targets other than 0/1 never
// count). Binary and multilabel scores go through the sigmoid when any of
// them (any counted one, with logitsAmongValid) lies outside [0, 1].
func (t Task) positives(metric string, preds, target *graph.Node, logitsAmongValid bool) (predPos, targetPos, valid *graph.Node) {
	labels, valid := t.labels(target)
	switch t.Kind {
	case BinaryTask, MultilabelTask:
		if !preds.Shape().EqualDimensions(target.Shape()) {
			panic(fmt.Sprintf("%s: preds shape %v and target shape %v differ", metric, preds.Shape().Dimensions, target.Shape().Dimensions))
		}
		c := t.NumClasses
		if t.Kind == MultilabelTask {
			checkRank(metric, "preds", preds, 2)
			if preds.Shape().Dimensions[1] != c {
				panic(fmt.Sprintf("%s: preds shape %v, want [N, %d] (%d labels)", metric, preds.Shape().Dimensions, c, c))
			}
		}
		if preds.DType().IsFloat() {
			mask := graph.OnesLike(valid)
			if logitsAmongValid {
				mask = valid
			}
			p := sigmoidIfLogits(preds, mask)
			predPos = graph.GreaterThan(p, graph.Scalar(p.Graph(), p.DType(), t.Threshold))
		} else {
			predPos = graph.Equal(graph.ConvertDType(preds, dtypes.Int64), graph.Scalar(preds.Graph(), dtypes.Int64, 1))
		}
		one, zero := graph.Scalar(target.Graph(), dtypes.Int64, 1), graph.ScalarZero(target.Graph(), dtypes.Int64)
		valid = graph.LogicalAnd(valid, graph.LogicalOr(graph.Equal(labels, one), graph.Equal(labels, zero)))
		targetPos = graph.Equal(labels, one)
		return graph.Reshape(predPos, -1, c), graph.Reshape(targetPos, -1, c), graph.Reshape(valid, -1, c)
	}
	// Multiclass.
	c := t.NumClasses
	checkRank(metric, "target", target, 1)
	n := target.Shape().Dimensions[0]
	switch {
	case preds.Rank() == 2 && preds.DType().IsFloat():
		if preds.Shape().Dimensions[0] != n || preds.Shape().Dimensions[1] != c {
			panic(fmt.Sprintf("%s: preds shape %v, want [%d, %d] for target [%d]", metric, preds.Shape().Dimensions, n, c, n))
		}
		if t.TopK == 1 {
			predPos = graph.OneHot(graph.ArgMax(preds, 1, dtypes.Int64), c, dtypes.Bool)
		} else {
			predPos = graph.TopKMask(preds, t.TopK, 1)
		}
	case preds.Rank() == 1 && preds.DType().IsInt():
		if t.TopK != 1 {
			panic(fmt.Sprintf("%s: TopK = %d needs scores [N, %d], got labels %v", metric, t.TopK, c, preds.Shape().Dimensions))
		}
		predPos = graph.OneHot(graph.ConvertDType(preds, dtypes.Int64), c, dtypes.Bool)
	default:
		panic(fmt.Sprintf("%s: preds %s, want float scores [N, %d] or integer labels [N]", metric, preds.Shape(), c))
	}
	targetPos = graph.OneHot(labels, c, dtypes.Bool)
	valid = graph.BroadcastToDims(graph.InsertAxes(valid, -1), n, c)
	return predPos, targetPos, valid
}

// counts returns the four count states as float64.
func counts(state []*tensors.Tensor) (tp, fp, tn, fn []float64) {
	return flatFloat64(state[0]), flatFloat64(state[1]), flatFloat64(state[2]), flatFloat64(state[3])
}

// safeDivide is torchmetrics' _safe_divide: num / den, or num when den is 0.
func safeDivide(num, den float64) float64 {
	if den == 0 {
		return num
	}
	return num / den
}

// sum returns the sum of xs.
func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// scoreFunc computes a score from (possibly summed) counts.
type scoreFunc func(tp, fp, tn, fn float64) float64

// reduceScores is the value of a stat-scores metric: the binary score, the
// score of the summed counts (Micro), or the per-class scores averaged as avg
// says (torchmetrics' _adjust_weights_safe_divide).
func reduceScores(task Task, avg Average, state []*tensors.Tensor, micro, perClass scoreFunc) Value {
	tp, fp, tn, fn := counts(state)
	if task.Kind == BinaryTask {
		return scalar(perClass(tp[0], fp[0], tn[0], fn[0]))
	}
	if avg == Micro {
		return scalar(micro(sum(tp), sum(fp), sum(tn), sum(fn)))
	}
	scores := make([]float64, len(tp))
	for i := range tp {
		scores[i] = perClass(tp[i], fp[i], tn[i], fn[i])
	}
	if avg == NoAverage {
		return vector(scores)
	}
	weights := make([]float64, len(tp))
	for i := range weights {
		switch {
		case avg == Weighted:
			weights[i] = tp[i] + fn[i]
		case task.Kind == MulticlassTask && tp[i]+fp[i]+fn[i] == 0:
			weights[i] = 0 // a class never present nor predicted
		default:
			weights[i] = 1
		}
	}
	total := sum(weights)
	v := 0.0
	for i := range scores {
		v += safeDivide(weights[i]*scores[i], total)
	}
	return scalar(v)
}
