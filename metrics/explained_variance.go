package metrics

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// ExplainedVariance is 1 - Var(target - preds) / Var(target) over every
// sample seen: torchmetrics' ExplainedVariance. Inputs are [N] or
// [N, NumOutputs].
type ExplainedVariance struct {
	NumOutputs  int
	Multioutput Multioutput
}

// States implements Updater.
func (m ExplainedVariance) States() []StateSpec {
	k := []int{numOutputs(m.NumOutputs)}
	spec := func(name string) StateSpec {
		return StateSpec{Name: name, DType: dtypes.Float64, Dims: k, Reduce: ReduceSum}
	}
	return []StateSpec{
		{Name: "num_obs", DType: dtypes.Int64, Reduce: ReduceSum},
		spec("sum_error"), spec("sum_squared_error"), spec("sum_target"), spec("sum_squared_target"),
	}
}

// Update implements Updater.
func (m ExplainedVariance) Update(state []*graph.Node, preds, target *graph.Node) []*graph.Node {
	checkSameShape("ExplainedVariance", preds, target)
	k := numOutputs(m.NumOutputs)
	p, t := outputColumns("ExplainedVariance", preds, k), outputColumns("ExplainedVariance", target, k)
	diff := graph.Sub(t, p)
	return []*graph.Node{
		graph.Add(state[0], rowCount(t)),
		colSums(state[1], diff), colSums(state[2], graph.Square(diff)),
		colSums(state[3], t), colSums(state[4], graph.Square(t)),
	}
}

// Compute implements Metric.
func (m ExplainedVariance) Compute(state []*tensors.Tensor) (Value, error) {
	n := flatFloat64(state[0])[0]
	se, sse, st, sst := flatFloat64(state[1]), flatFloat64(state[2]), flatFloat64(state[3]), flatFloat64(state[4])
	scores := make([]float64, len(se))
	denominators := make([]float64, len(se))
	for i := range se {
		diffAvg := se[i] / n
		num := sse[i]/n - diffAvg*diffAvg
		targetAvg := st[i] / n
		den := sst[i]/n - targetAvg*targetAvg
		denominators[i] = den
		switch {
		case num != 0 && den != 0:
			scores[i] = 1 - num/den
		case num != 0:
			scores[i] = 0
		default:
			scores[i] = 1
		}
	}
	return reduceOutputs(m.Multioutput, scores, denominators)
}
