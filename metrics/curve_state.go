package metrics

import (
	"fmt"
	"slices"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// Linspace returns n thresholds evenly spaced over [0, 1], i/(n-1), as
// torchmetrics' `thresholds=n` does with torch.linspace. Metrics compare scores
// with them in the scores' dtype; in float32, torch.linspace's values differ
// from the nearest float32 of i/(n-1) by one unit in the last place for some
// i (its vectorised kernel rounds differently), which changes a binned count
// only for a score within 1e-7 of such a threshold.
func Linspace(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i) / float64(max(n-1, 1))
	}
	return out
}

// curveState is the state of the curve metrics (ROC, precision-recall curve,
// AUROC, average precision).
//
// Exact (thresholds nil): every score and label, as ReduceCat states: each
// step copies the batch's scores ([N, C] float64; C = 1 for binary, the
// classes or labels otherwise) and labels ([N] int64; [N, L] for multilabel)
// to the host, where they are kept in chunks of ChunkRows rows until Compute
// sorts them. Memory grows with the epoch: use thresholds for large
// evaluation sets.
//
// Binned (thresholds given): an int64 [T, C, 2, 2] confusion matrix per
// threshold (rows: target negative/positive, columns: score below/at or above
// the threshold), updated inside the compiled step; no per-step transfer.
type curveState struct {
	task       Task
	thresholds []float64
}

// Tasks implements Classifier.
func (s curveState) Tasks() []Task { return []Task{s.task} }

func newCurveState(name string, task Task, thresholds []float64) (curveState, error) {
	if err := task.Validate(); err != nil {
		return curveState{}, fmt.Errorf("%s: %w", name, err)
	}
	if thresholds != nil {
		if len(thresholds) < 2 {
			return curveState{}, fmt.Errorf("%s: %d thresholds, want at least 2 (or nil for the exact curve)", name, len(thresholds))
		}
		for i, th := range thresholds {
			if th < 0 || th > 1 {
				return curveState{}, fmt.Errorf("%s: thresholds[%d] = %v, want values in [0, 1]", name, i, th)
			}
		}
		thresholds = slices.Clone(thresholds)
	}
	return curveState{task: task, thresholds: thresholds}, nil
}

func (s curveState) binned() bool { return s.thresholds != nil }

// States implements Updater.
func (s curveState) States() []StateSpec {
	c := s.task.NumClasses
	if s.binned() {
		return []StateSpec{{Name: "confmat", DType: dtypes.Int64, Dims: []int{len(s.thresholds), c, 2, 2}, Reduce: ReduceSum}}
	}
	var targetDims []int
	if s.task.Kind == MultilabelTask {
		targetDims = []int{c}
	}
	return []StateSpec{
		{Name: "preds", DType: dtypes.Float64, Dims: []int{c}, Reduce: ReduceCat},
		{Name: "target", DType: dtypes.Int64, Dims: targetDims, Reduce: ReduceCat},
	}
}

// StateKey implements Shared: curve metrics of one task and thresholds share
// the state.
func (s curveState) StateKey() string {
	return fmt.Sprintf("curve/%s/thresholds=%v", s.task.key(), s.thresholds)
}

// Update implements Updater.
func (s curveState) Update(state []*graph.Node, preds, target *graph.Node) []*graph.Node {
	scores, labels, valid := s.scores(preds, target)
	if !s.binned() {
		return []*graph.Node{graph.ConvertDType(scores, dtypes.Float64), labels}
	}
	// positive and counted: [N, C], per sample and class (label).
	c := s.task.NumClasses
	var positive, counted *graph.Node
	if s.task.Kind == MulticlassTask {
		positive = graph.OneHot(labels, c, dtypes.Bool)
		counted = graph.BroadcastToShape(graph.InsertAxes(valid, -1), positive.Shape())
	} else {
		one := graph.Scalar(labels.Graph(), dtypes.Int64, 1)
		zero := graph.ScalarZero(labels.Graph(), dtypes.Int64)
		counted = graph.LogicalAnd(valid, graph.LogicalOr(graph.Equal(labels, one), graph.Equal(labels, zero)))
		positive = graph.Equal(labels, one)
		if s.task.Kind == BinaryTask {
			positive, counted = graph.InsertAxes(positive, -1), graph.InsertAxes(counted, -1)
		}
	}
	pos := graph.LogicalAnd(positive, counted)
	neg := graph.LogicalAnd(graph.LogicalNot(positive), counted)
	thr := graph.Reshape(graph.ConstAsDType(scores.Graph(), scores.DType(), s.thresholds), 1, 1, len(s.thresholds))
	above := graph.GreaterOrEqual(graph.InsertAxes(scores, -1), thr) // [N, C, T]
	// Counts of samples at or above each threshold; those below are the
	// class's totals minus them (half the work of counting all four cells).
	countAbove := func(t *graph.Node) *graph.Node {
		both := graph.LogicalAnd(graph.InsertAxes(t, -1), above)
		return graph.ReduceSum(graph.ConvertDType(both, dtypes.Int64), 0) // [C, T]
	}
	total := func(t *graph.Node) *graph.Node {
		return graph.InsertAxes(graph.ReduceSum(graph.ConvertDType(t, dtypes.Int64), 0), -1) // [C, 1]
	}
	tp, fp := countAbove(pos), countAbove(neg)
	fn, tn := graph.Sub(total(pos), tp), graph.Sub(total(neg), fp)
	cells := graph.Stack([]*graph.Node{tn, fp, fn, tp}, -1) // [C, T, 4]
	cm := graph.Reshape(graph.TransposeAllAxes(cells, 1, 0, 2), len(s.thresholds), c, 2, 2)
	return []*graph.Node{graph.Add(state[0], cm)}
}

// scores returns the batch's scores [N, C] (sigmoid or softmax applied when
// they are logits, as torchmetrics decides it), labels ([N] int64, [N, L]
// for multilabel) and which labels count (same shape).
func (s curveState) scores(preds, target *graph.Node) (scores, labels, valid *graph.Node) {
	if !preds.DType().IsFloat() {
		panic(fmt.Sprintf("curve metrics: preds dtype %s, want float scores", preds.DType()))
	}
	c := s.task.NumClasses
	switch s.task.Kind {
	case BinaryTask:
		if !preds.Shape().EqualDimensions(target.Shape()) {
			panic(fmt.Sprintf("curve metrics: preds shape %v and target shape %v differ", preds.Shape().Dimensions, target.Shape().Dimensions))
		}
		labels, valid = s.task.labels(graph.Reshape(target, -1))
		p := sigmoidIfLogits(graph.Reshape(preds, -1), valid) // among the counted scores
		return graph.InsertAxes(p, -1), labels, valid
	case MultilabelTask:
		if preds.Rank() != 2 || preds.Shape().Dimensions[1] != c || !preds.Shape().EqualDimensions(target.Shape()) {
			panic(fmt.Sprintf("curve metrics: preds shape %v and target shape %v, want both [N, %d]", preds.Shape().Dimensions, target.Shape().Dimensions, c))
		}
		labels, valid = s.task.labels(target)
		return sigmoidIfLogits(preds, graph.OnesLike(valid)), labels, valid // among every score
	}
	checkRank("curve metrics", "target", target, 1)
	n := target.Shape().Dimensions[0]
	if preds.Rank() != 2 || preds.Shape().Dimensions[0] != n || preds.Shape().Dimensions[1] != c {
		panic(fmt.Sprintf("curve metrics: preds shape %v, want [%d, %d] for target [%d]", preds.Shape().Dimensions, n, c, n))
	}
	labels, valid = s.task.labels(target)
	return softmaxIfLogits(preds, valid), labels, valid
}

// classCurve holds, for one class, the points of the ROC and precision-recall
// curves and the class's support (positives counted).
type classCurve struct {
	fps, tps, thresholds []float64 // exact: descending distinct scores; binned: ascending thresholds
	fns, tns             []float64 // binned only
	support              float64
}

// binnedCurve returns class k's curve from the binned state ([T, C, 2, 2]),
// or the curve of the counts summed over classes when k < 0.
func (s curveState) binnedCurve(cm []float64, k int) classCurve {
	c := s.task.NumClasses
	cc := classCurve{thresholds: s.thresholds}
	for i := range s.thresholds {
		var cell [4]float64
		for j := range c {
			if k < 0 || j == k {
				for q := range cell {
					cell[q] += cm[(i*c+j)*4+q]
				}
			}
		}
		cc.tns = append(cc.tns, cell[0])
		cc.fps = append(cc.fps, cell[1])
		cc.fns = append(cc.fns, cell[2])
		cc.tps = append(cc.tps, cell[3])
	}
	cc.support = cc.fns[0] + cc.tps[0]
	return cc
}

// exactColumn returns the scores of class (label) k and whether each sample
// is positive for it, ignored samples (labels) left out.
func (s curveState) exactColumn(scores []float64, labels []int64, k int) ([]float64, []bool) {
	c := s.task.NumClasses
	var col []float64
	var isPos []bool
	for i := range len(scores) / c {
		label := labels[i]
		if s.task.Kind == MultilabelTask {
			label = labels[i*c+k]
		}
		if s.task.HasIgnoreIndex && label == int64(s.task.IgnoreIndex) {
			continue
		}
		col = append(col, scores[i*c+k])
		switch s.task.Kind {
		case MulticlassTask:
			isPos = append(isPos, label == int64(k))
		default:
			isPos = append(isPos, label == 1)
		}
	}
	return col, isPos
}

// perClass returns one classCurve per class or label (one for binary).
func (s curveState) perClass(state []*tensors.Tensor) []classCurve {
	out := make([]classCurve, s.task.NumClasses)
	if s.binned() {
		cm := flatFloat64(state[0])
		for k := range out {
			out[k] = s.binnedCurve(cm, k)
		}
		return out
	}
	scores, labels := flatFloat64(state[0]), tensors.MustCopyFlatData[int64](state[1])
	for k := range out {
		out[k] = exactCurve(s.exactColumn(scores, labels, k))
	}
	return out
}

// micro returns the curve of every (sample, label) pair together: the
// multilabel Micro average.
func (s curveState) micro(state []*tensors.Tensor) classCurve {
	if s.binned() {
		return s.binnedCurve(flatFloat64(state[0]), -1)
	}
	scores, labels := flatFloat64(state[0]), tensors.MustCopyFlatData[int64](state[1])
	var all []float64
	var isPos []bool
	for k := range s.task.NumClasses {
		col, pos := s.exactColumn(scores, labels, k)
		all, isPos = append(all, col...), append(isPos, pos...)
	}
	return exactCurve(all, isPos)
}
