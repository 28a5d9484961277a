package volt_test

import (
	"fmt"
	"maps"
	"testing"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/metrics"
	"github.com/voltml/volt/optim"
)

// manualPair trains two parts by hand, as a GAN does: part /d on the batch
// and on /g's output from random noise, then /g through the /d its Step
// has just updated. The noise comes from the store's random state, and the
// second loss reads the updated /d and /g's output computed before it.
type manualPair struct{ boring }

func (m *manualPair) AutomaticOptimization() bool { return false }

func (m *manualPair) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	x, y := b.Input(0), b.Label(0)
	n := x.Shape().Dimensions[0]
	z := s.Scope().RandomNormal(s.Graph(), shapes.Make(x.DType(), n, 8))
	gScope, dScope := s.Scope().In("g"), s.Scope().In("d")
	fake := plainDense(gScope, graph.Add(x, z), 8)
	d := func(v *graph.Node) *graph.Node { return plainDense(dScope, v, 1) }
	dLoss := graph.ReduceAllMean(graph.Square(graph.Sub(d(graph.Concatenate([]*graph.Node{x, graph.StopGradient(fake)}, 0)),
		graph.Concatenate([]*graph.Node{y, graph.ZerosLike(y)}, 0))))
	s.Log("d_loss", dLoss, volt.ProgBar)
	s.Optimizers()[0].Step(dLoss)
	s.LogMetric("d_mse", metrics.MeanSquaredError{}, d(x), y, volt.OnEpoch(true))
	gLoss := graph.ReduceAllMean(graph.Square(graph.Sub(d(fake), y)))
	s.Log("g_loss", gLoss)
	s.Optimizers()[1].Step(gLoss)
	return gLoss
}

// plainDense is x·w + b with the variables of scope, built from plain ops
// (GoMLX's fused dense has no second derivative, which the loss through an
// updated /d would need).
func plainDense(scope *model.Scope, x *graph.Node, out int) *graph.Node {
	in := x.Shape().Dimensions[1]
	w := scope.VariableWithShape("w", shapes.Make(x.DType(), in, out)).NodeValue(x.Graph())
	b := scope.VariableWithShape("b", shapes.Make(x.DType(), out)).NodeValue(x.Graph())
	return graph.Add(graph.Dot(x, w).Product(), graph.Reshape(b, 1, out))
}

func (m *manualPair) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimizers{
		{Optimizer: optim.Adam(0.01), Params: []string{"/d"}},
		{Optimizer: optim.Adam(0.01), Params: []string{"/g"}},
	}
}

// TestManualStepInStages: a manual step run as data-parallel training runs
// it (in stages, each Step's gradients reduced on the host before the next
// stage applies them; here by a reducer standing for the ranks) gives
// bitwise the weights, optimizer state, random state and logged values of
// the fused manual step: with 1 rank and the identity, and with 2 ranks
// whose sum doubles each gradient (2 identical ranks: the mean is this
// rank's). The reducer runs once per Step.
func TestManualStepInStages(t *testing.T) {
	run := func(ranks int) (map[string][]byte, map[string]float64, int, int64) {
		volt.SeedEverything(5)
		defer volt.SeedEverything(0)
		tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 2}))
		calls := 0
		if ranks > 0 {
			volt.SetGradientReducer(tr, ranks, func(g []*tensors.Tensor) ([]*tensors.Tensor, error) {
				calls++
				out := make([]*tensors.Tensor, len(g))
				for i, grad := range g {
					v := tensors.MustCopyFlatData[float32](grad)
					for j := range v {
						v[j] *= float32(ranks)
					}
					out[i] = tensors.FromFlatDataAndDimensions(v, grad.Shape().Dimensions...)
				}
				return out, nil
			})
		}
		if err := tr.Fit(t.Context(), &manualPair{}, boringData()); err != nil {
			t.Fatal(err)
		}
		w, err := testutil.Weights(tr.Store())
		if err != nil {
			t.Fatal(err)
		}
		return w, tr.CallbackMetrics(), calls, tr.GlobalStep()
	}
	fusedW, fusedM, _, fusedSteps := run(0)
	if len(fusedM) < 5 {
		t.Fatalf("the fused step logged %v", fusedM)
	}
	for _, ranks := range []int{1, 2} {
		t.Run(fmt.Sprintf("ranks_%d", ranks), func(t *testing.T) {
			w, m, calls, steps := run(ranks)
			if want := 2 * 4 * 2; calls != want || steps != fusedSteps {
				t.Errorf("the reducer ran %d times, want %d (each Step of 4 batches × 2 epochs); %d global steps, fused %d", calls, want, steps, fusedSteps)
			}
			if len(w) != len(fusedW) {
				t.Errorf("%d variables, the fused step has %d", len(w), len(fusedW))
			}
			for path, fw := range fusedW {
				if string(w[path]) != string(fw) {
					t.Errorf("%s differs from the fused step's", path)
				}
			}
			if !maps.Equal(m, fusedM) {
				t.Errorf("logged values differ:\nstages %v\nfused  %v", m, fusedM)
			}
		})
	}
}
