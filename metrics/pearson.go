package metrics

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// PearsonCorrCoef is Pearson's correlation between preds and target over
// every sample seen: torchmetrics' PearsonCorrCoef. Inputs are [N] or
// [N, NumOutputs]; the value is one coefficient per output.
//
// The state is six float64 sums (n, Σx, Σy, Σx², Σy², Σxy) that add across
// batches and processes; torchmetrics keeps running means and merges them
// with a custom rule instead. The sums lose precision when |mean| ≫ std
// (more than ~1e6), which float64 leaves far from float32 inputs' own error.
type PearsonCorrCoef struct{ NumOutputs int }

// States implements Updater.
func (m PearsonCorrCoef) States() []StateSpec {
	k := []int{numOutputs(m.NumOutputs)}
	spec := func(name string) StateSpec {
		return StateSpec{Name: name, DType: dtypes.Float64, Dims: k, Reduce: ReduceSum}
	}
	return []StateSpec{
		{Name: "n", DType: dtypes.Int64, Reduce: ReduceSum},
		spec("sum_x"), spec("sum_y"), spec("sum_xx"), spec("sum_yy"), spec("sum_xy"),
	}
}

// Update implements Updater.
func (m PearsonCorrCoef) Update(state []*graph.Node, preds, target *graph.Node) []*graph.Node {
	checkSameShape("PearsonCorrCoef", preds, target)
	k := numOutputs(m.NumOutputs)
	x, y := outputColumns("PearsonCorrCoef", preds, k), outputColumns("PearsonCorrCoef", target, k)
	return []*graph.Node{
		graph.Add(state[0], rowCount(x)),
		colSums(state[1], x), colSums(state[2], y),
		colSums(state[3], graph.Square(x)), colSums(state[4], graph.Square(y)),
		colSums(state[5], graph.Mul(x, y)),
	}
}

// Compute implements Metric: NaN where a variance is zero, clamped to [-1, 1].
func (m PearsonCorrCoef) Compute(state []*tensors.Tensor) (Value, error) {
	n := flatFloat64(state[0])[0]
	sx, sy, sxx, syy, sxy := flatFloat64(state[1]), flatFloat64(state[2]), flatFloat64(state[3]), flatFloat64(state[4]), flatFloat64(state[5])
	out := make([]float64, len(sx))
	for i := range out {
		cov := sxy[i] - sx[i]*sy[i]/n
		vx := sxx[i] - sx[i]*sx[i]/n
		vy := syy[i] - sy[i]*sy[i]/n
		out[i] = max(-1, min(1, cov/math.Sqrt(vx*vy)))
	}
	if len(out) == 1 {
		return scalar(out[0]), nil
	}
	return vector(out), nil
}
