package nn_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers/lstm"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/nn"
)

// lstmOutputs runs fn's LSTM in float64 on x [batch, time, features] and
// returns, flattened: the outputs [batch, time, hidden], the last hidden
// and cell states, and the gradients of Σ r·outputs + Σ r'·(h, c) (fixed
// random weights r) with respect to x and the three variables.
func lstmOutputs(t *testing.T, be compute.Backend, store *model.Store, x *tensors.Tensor, seed uint64,
	fn func(*model.Scope, *graph.Node) (outputs, h, c *graph.Node)) [][]float64 {
	t.Helper()
	exec, err := model.NewExec(be, store, func(scope *model.Scope, x *graph.Node) []*graph.Node {
		scope = scope.In("lstm")
		outputs, h, c := fn(scope, x)
		rng := rand.New(rand.NewPCG(seed, 7))
		weighted := func(v *graph.Node) *graph.Node {
			r := make([]float64, v.Shape().Size())
			for i := range r {
				r[i] = rng.Float64()*2 - 1
			}
			w := graph.Const(v.Graph(), tensors.FromFlatDataAndDimensions(r, v.Shape().Dimensions...))
			return graph.ReduceAllSum(graph.Mul(v, w))
		}
		objective := graph.Add(weighted(outputs), graph.Add(weighted(h), weighted(c)))
		wrt := []*graph.Node{x}
		for _, name := range []string{"inputsW", "recurrentW", "biasesW"} {
			wrt = append(wrt, scope.GetVariable(name).NodeValue(x.Graph()))
		}
		return append([]*graph.Node{outputs, h, c}, graph.Gradient(objective, wrt...)...)
	})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := exec.Call(x)
	if err != nil {
		t.Fatal(err)
	}
	flat := make([][]float64, len(outs))
	for i, o := range outs {
		flat[i] = tensors.MustCopyFlatData[float64](o)
	}
	return flat
}

// TestLSTMEqualsGoMLXLSTM: on 40 generated sizes (batch 1–4, time 1–9,
// features 1–5, hidden 1–7) and the same variables, nn.LSTM's outputs, last
// states and gradients (with respect to x and each variable) equal
// GoMLX's layers/lstm's within 1e-12 in float64.
func TestLSTMEqualsGoMLXLSTM(t *testing.T) {
	names := []string{"outputs", "last hidden", "last cell", "dx", "d inputsW", "d recurrentW", "d biasesW"}
	rng := rand.New(rand.NewPCG(23, 5))
	for i := range 40 {
		batch, steps, features, hidden := 1+rng.IntN(4), 1+rng.IntN(9), 1+rng.IntN(5), 1+rng.IntN(7)
		t.Run(fmt.Sprintf("b%d_t%d_f%d_h%d", batch, steps, features, hidden), func(t *testing.T) {
			xs := make([]float64, batch*steps*features)
			for j := range xs {
				xs[j] = rng.NormFloat64()
			}
			x := tensors.FromFlatDataAndDimensions(xs, batch, steps, features)
			store := model.NewStore()
			if err := store.SetRNGStateFromSeed(int64(i)); err != nil {
				t.Fatal(err)
			}
			be := backend(t)
			got := lstmOutputs(t, be, store, x, uint64(i), func(s *model.Scope, x *graph.Node) (o, h, c *graph.Node) {
				return nn.LSTM(s, x, hidden)
			})
			// GoMLX's, on the variables nn.LSTM initialised (same store and scope).
			want := lstmOutputs(t, be, store, x, uint64(i), func(s *model.Scope, x *graph.Node) (o, h, c *graph.Node) {
				all, h, c := lstm.New(s, x, hidden).Done() // all [time, 1, batch, hidden], h and c [1, batch, hidden]
				o = graph.TransposeAllAxes(graph.Squeeze(all, 1), 1, 0, 2)
				return o, graph.Squeeze(h, 0), graph.Squeeze(c, 0)
			})
			for k, name := range names {
				if len(got[k]) != len(want[k]) {
					t.Fatalf("%s: %d values, GoMLX's %d", name, len(got[k]), len(want[k]))
				}
				for j := range got[k] {
					if d := math.Abs(got[k][j] - want[k][j]); d > 1e-12*math.Max(1, math.Abs(want[k][j])) {
						t.Fatalf("%s[%d] = %.17g, GoMLX's layers/lstm %.17g", name, j, got[k][j], want[k][j])
					}
				}
			}
		})
	}
}

// TestRecurrentLayersInitialiseAsPyTorch: nn.LSTM's and nn.GRU's
// variables, with no torchinit.Apply, are U(±1/√hidden), PyTorch's
// initialisation (package torchinit's rules for their names; its
// TestBoundsMatchPyTorch checks those against PyTorch's own draws), not
// GoMLX's default.
func TestRecurrentLayersInitialiseAsPyTorch(t *testing.T) {
	const hidden = 64
	for _, tc := range []struct {
		layer     string
		build     func(*model.Scope, *graph.Node)
		variables []string
	}{
		{"nn.LSTM", func(s *model.Scope, x *graph.Node) { nn.LSTM(s, x, hidden) }, []string{"inputsW", "recurrentW", "biasesW"}},
		{"nn.GRU", func(s *model.Scope, x *graph.Node) { nn.GRU(s, x, hidden) }, []string{"weight_ih", "weight_hh", "bias_ih", "bias_hh"}},
	} {
		t.Run(tc.layer, func(t *testing.T) {
			store := model.NewStore()
			g := graph.NewGraph(backend(t), "trace")
			tc.build(store.RootScope().In("rnn"), graph.Parameter(g, "x", shapes.Make(dtypes.Float64, 2, 3, 4)))
			if err := store.InitializeVariables(g.Backend(), nil); err != nil {
				t.Fatal(err)
			}
			bound := 1 / math.Sqrt(hidden)
			for _, name := range tc.variables {
				v, err := store.GetVariable("/rnn/" + name).Value()
				if err != nil {
					t.Fatal(err)
				}
				values := tensors.MustCopyFlatData[float64](v)
				maxAbs, sumSq := 0.0, 0.0
				for _, w := range values {
					maxAbs, sumSq = math.Max(maxAbs, math.Abs(w)), sumSq+w*w
				}
				std := math.Sqrt(sumSq / float64(len(values)))
				if maxAbs > bound || math.Abs(std-bound/math.Sqrt(3)) > 0.1*bound/math.Sqrt(3) {
					t.Errorf("%s: max |w| %.4f, std %.4f; PyTorch's U(±%.4f) has std %.4f", name, maxAbs, std, bound, bound/math.Sqrt(3))
				}
			}
		})
	}
}

// TestRecurrentLayersRefuseBadShapes: nn.LSTM and nn.GRU given x not
// [batch, time, features], with no time steps, or no hidden units panic
// naming the layer and the argument.
func TestRecurrentLayersRefuseBadShapes(t *testing.T) {
	layers := map[string]func(*model.Scope, *graph.Node, int){
		"nn.LSTM": func(s *model.Scope, x *graph.Node, hidden int) { nn.LSTM(s, x, hidden) },
		"nn.GRU":  func(s *model.Scope, x *graph.Node, hidden int) { nn.GRU(s, x, hidden) },
	}
	for name, layer := range layers {
		for _, tc := range []struct {
			dims   []int
			hidden int
			says   string
		}{
			{[]int{2, 3}, 4, "x must be [batch, time, features]"},
			{[]int{2, 0, 3}, 4, "x must be [batch, time, features] with at least one step, got shape (Float32)[2, 0, 3]"},
			{[]int{2, 3, 4}, 0, "hidden must be positive"},
		} {
			func() {
				defer func() {
					if r := fmt.Sprint(recover()); !strings.Contains(r, name+": "+tc.says) {
						t.Errorf("%s(%v, %d) panicked with %q, want it to say %q", name, tc.dims, tc.hidden, r, tc.says)
					}
				}()
				g := graph.NewGraph(backend(t), "bad")
				layer(model.NewStore().RootScope(), graph.Parameter(g, "x", shapes.Make(dtypes.Float32, tc.dims...)), tc.hidden)
			}()
		}
	}
}
