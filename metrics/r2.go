package metrics

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// R2Score is the coefficient of determination over every sample seen:
// torchmetrics' R2Score. Inputs are [N] (NumOutputs 0 or 1) or [N, NumOutputs].
// Adjusted > 0 gives the adjusted R² for that many independent regressors.
type R2Score struct {
	NumOutputs  int
	Multioutput Multioutput
	Adjusted    int
}

// States implements Updater.
func (m R2Score) States() []StateSpec {
	k := []int{numOutputs(m.NumOutputs)}
	return []StateSpec{
		{Name: "sum_squared_obs", DType: dtypes.Float64, Dims: k, Reduce: ReduceSum},
		{Name: "sum_obs", DType: dtypes.Float64, Dims: k, Reduce: ReduceSum},
		{Name: "rss", DType: dtypes.Float64, Dims: k, Reduce: ReduceSum},
		{Name: "total", DType: dtypes.Int64, Reduce: ReduceSum},
	}
}

// Update implements Updater.
func (m R2Score) Update(state []*graph.Node, preds, target *graph.Node) []*graph.Node {
	checkSameShape("R2Score", preds, target)
	k := numOutputs(m.NumOutputs)
	p, t := outputColumns("R2Score", preds, k), outputColumns("R2Score", target, k)
	return []*graph.Node{
		colSums(state[0], graph.Square(t)),
		colSums(state[1], t),
		colSums(state[2], graph.Square(graph.Sub(t, p))),
		graph.Add(state[3], rowCount(t)),
	}
}

// Compute implements Metric. Fewer than two samples is an error, as in
// torchmetrics.
func (m R2Score) Compute(state []*tensors.Tensor) (Value, error) {
	sumSq, sum, rss := flatFloat64(state[0]), flatFloat64(state[1]), flatFloat64(state[2])
	n := flatFloat64(state[3])[0]
	if n < 2 {
		return Value{}, fmt.Errorf("R2Score needs at least two samples, got %v", n)
	}
	scores := make([]float64, len(rss))
	tss := make([]float64, len(rss))
	for i := range rss {
		tss[i] = sumSq[i] - sum[i]*(sum[i]/n)
		rssNonZero, tssNonZero := !isCloseToZero(rss[i]), !isCloseToZero(tss[i])
		switch {
		case rssNonZero && tssNonZero:
			scores[i] = 1 - rss[i]/tss[i]
		case rssNonZero:
			scores[i] = 0
		default:
			scores[i] = 1
		}
	}
	v, err := reduceOutputs(m.Multioutput, scores, tss)
	if err != nil || m.Adjusted == 0 || m.Multioutput == RawValues {
		return v, err
	}
	if m.Adjusted < 0 {
		return Value{}, fmt.Errorf("R2Score.Adjusted = %d, want 0 or more", m.Adjusted)
	}
	if float64(m.Adjusted) >= n-1 { // torchmetrics warns and falls back to the plain score
		return v, nil
	}
	v.Data[0] = 1 - (1-v.Data[0])*(n-1)/(n-float64(m.Adjusted)-1)
	return v, nil
}

// isCloseToZero is torch.isclose(x, 0, atol=1e-4) as R2Score uses it.
func isCloseToZero(x float64) bool { return math.Abs(x) <= 1e-4 }
