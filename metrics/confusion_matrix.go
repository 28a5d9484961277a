package metrics

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// Normalize says how ConfusionMatrix normalises its counts.
type Normalize int

const (
	// NoNormalize returns the counts.
	NoNormalize Normalize = iota
	// NormalizeTrue divides each row (true class) by its sum.
	NormalizeTrue
	// NormalizePred divides each column (predicted class) by its sum.
	NormalizePred
	// NormalizeAll divides by the total.
	NormalizeAll
)

// ConfusionMatrix counts samples by (true class, predicted class):
// torchmetrics' ConfusionMatrix. The value is [C, C] for multiclass, [2, 2]
// for binary and [L, 2, 2] for multilabel (rows: target 0/1, columns:
// prediction 0/1). Empty rows or columns normalise to 0.
type ConfusionMatrix struct {
	task      Task
	normalize Normalize
}

// NewConfusionMatrix returns a confusion matrix of task (TopK must be 1).
func NewConfusionMatrix(task Task, normalize Normalize) (*ConfusionMatrix, error) {
	if err := task.Validate(); err != nil {
		return nil, fmt.Errorf("ConfusionMatrix: %w", err)
	}
	if task.TopK != 1 {
		return nil, fmt.Errorf("ConfusionMatrix: Task.TopK = %d, want 1", task.TopK)
	}
	if normalize < NoNormalize || normalize > NormalizeAll {
		return nil, fmt.Errorf("ConfusionMatrix: normalize = %d, want NoNormalize, NormalizeTrue, NormalizePred or NormalizeAll", int(normalize))
	}
	return &ConfusionMatrix{task: task, normalize: normalize}, nil
}

func (m *ConfusionMatrix) dims() []int {
	switch m.task.Kind {
	case BinaryTask:
		return []int{2, 2}
	case MultilabelTask:
		return []int{m.task.NumClasses, 2, 2}
	}
	return []int{m.task.NumClasses, m.task.NumClasses}
}

// States implements Updater.
func (m *ConfusionMatrix) States() []StateSpec {
	return []StateSpec{{Name: "confmat", DType: dtypes.Int64, Dims: m.dims(), Reduce: ReduceSum}}
}

// Tasks implements Classifier.
func (m *ConfusionMatrix) Tasks() []Task { return []Task{m.task} }

// StateKey implements Shared: normalisations of one task share the counts.
func (m *ConfusionMatrix) StateKey() string { return "confusion_matrix/" + m.task.key() }

// Update implements Updater.
func (m *ConfusionMatrix) Update(state []*graph.Node, preds, target *graph.Node) []*graph.Node {
	task := m.task
	task.TopK = 1
	predPos, targetPos, valid := task.positives("ConfusionMatrix", preds, target, task.Kind == BinaryTask)
	if task.Kind == MulticlassTask {
		// [C, C] = targetᵀ · preds over the counted samples; float32 products
		// are exact for batches below 2^24 samples.
		t := graph.ConvertDType(graph.LogicalAnd(targetPos, valid), dtypes.Float32)
		p := graph.ConvertDType(predPos, dtypes.Float32)
		cm := graph.Einsum("nt,np->tp", t, p)
		return []*graph.Node{graph.Add(state[0], graph.ConvertDType(graph.Round(cm), dtypes.Int64))}
	}
	count := func(p, t *graph.Node) *graph.Node {
		both := graph.LogicalAnd(graph.LogicalAnd(p, t), valid)
		return graph.ReduceSum(graph.ConvertDType(both, dtypes.Int64), 0) // [C]
	}
	predNeg, targetNeg := graph.LogicalNot(predPos), graph.LogicalNot(targetPos)
	cells := graph.Stack([]*graph.Node{
		count(predNeg, targetNeg), count(predPos, targetNeg),
		count(predNeg, targetPos), count(predPos, targetPos),
	}, 1) // [C, 4]: (t0p0, t0p1, t1p0, t1p1)
	return []*graph.Node{graph.Add(state[0], graph.Reshape(cells, m.dims()...))}
}

// Compute implements Metric.
func (m *ConfusionMatrix) Compute(state []*tensors.Tensor) (Value, error) {
	cm := flatFloat64(state[0])
	dims := m.dims()
	rows, cols := dims[len(dims)-2], dims[len(dims)-1]
	blocks := len(cm) / (rows * cols)
	out := make([]float64, len(cm))
	copy(out, cm)
	for b := range blocks {
		block := out[b*rows*cols : (b+1)*rows*cols]
		switch m.normalize {
		case NormalizeTrue:
			for r := range rows {
				divide(block[r*cols:(r+1)*cols], sum(block[r*cols:(r+1)*cols]), 1)
			}
		case NormalizePred:
			for c := range cols {
				total := 0.0
				for r := range rows {
					total += block[r*cols+c]
				}
				divide(block[c:], total, cols)
			}
		case NormalizeAll:
			divide(block, sum(block), 1)
		}
	}
	return Value{Dims: dims, Data: out}, nil
}

// divide divides every stride-th element of xs by d, NaN (0/0) becoming 0 as
// in torchmetrics.
func divide(xs []float64, d float64, stride int) {
	for i := 0; i < len(xs); i += stride {
		v := xs[i] / d
		if math.IsNaN(v) {
			v = 0
		}
		xs[i] = v
	}
}
