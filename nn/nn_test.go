package nn_test

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	_ "github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/nn"
)

// golden is testdata/golden.json, written by testdata/gen.py with PyTorch.
type golden struct {
	LayerNorm    [][]float64 `json:"layer_norm"`
	LayerNormEps float64     `json:"layer_norm_eps"`
	MSELoss      float64     `json:"mse_loss"`
	LinearBound  float64     `json:"linear_256_128_bound"`
}

func readGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// grid is gen.py's input formula.
func grid(rows, cols int, a, b, c float64) [][]float32 {
	out := make([][]float32, rows)
	for i := range out {
		out[i] = make([]float32, cols)
		for j := range out[i] {
			out[i][j] = float32(math.Sin(a*float64(i)+b*float64(j))*2 + c*float64(j))
		}
	}
	return out
}

func backend(t *testing.T) compute.Backend {
	t.Helper()
	b, err := compute.NewWithConfig("go")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// run computes fn on the inputs in a fresh store and returns the output.
func run(t *testing.T, store *model.Store, fn func(*model.Scope, *graph.Node, *graph.Node) *graph.Node, a, b [][]float32) *tensors.Tensor {
	t.Helper()
	exec, err := model.NewExec1(backend(t), store, fn)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Call(tensors.FromValue(a), tensors.FromValue(b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLayerNormAndMSELossAsPyTorch: nn.LayerNorm and nn.MSELoss give
// PyTorch's values on the same inputs (GoMLX's LayerNorm, epsilon 1e-3,
// differs by more than the tolerance on this input).
func TestLayerNormAndMSELossAsPyTorch(t *testing.T) {
	g := readGolden(t)
	if g.LayerNormEps != nn.LayerNormEps {
		t.Errorf("LayerNormEps %v, PyTorch's %v", nn.LayerNormEps, g.LayerNormEps)
	}
	x, target := grid(3, 5, 1.3, 0.7, 0.1), grid(3, 5, 0.4, 1.1, -0.2)
	ln := tensors.MustCopyFlatData[float32](run(t, model.NewStore(), func(s *model.Scope, x, _ *graph.Node) *graph.Node {
		return nn.LayerNorm(s.In("ln"), x)
	}, x, target))
	for i, row := range g.LayerNorm {
		for j, want := range row {
			if got := float64(ln[i*5+j]); math.Abs(got-want) > 1e-5 {
				t.Errorf("LayerNorm[%d][%d] = %v, PyTorch %v", i, j, got, want)
			}
		}
	}
	mse := tensors.MustCopyFlatData[float32](run(t, model.NewStore(), func(_ *model.Scope, x, y *graph.Node) *graph.Node {
		return nn.MSELoss(x, y)
	}, x, target))[0]
	if math.Abs(float64(mse)-g.MSELoss) > 1e-5*g.MSELoss {
		t.Errorf("MSELoss = %v, PyTorch %v", mse, g.MSELoss)
	}
}

// TestMSELossRefusesBroadcasting: a [B] target against a [B, 1] output is
// refused, naming both shapes.
func TestMSELossRefusesBroadcasting(t *testing.T) {
	g := graph.NewGraph(backend(t), "shapes")
	defer func() {
		if r, _ := recover().(string); !strings.Contains(r, "nn.MSELoss: input [4 1] and target [4] must have the same shape") {
			t.Errorf("panic %q", r)
		}
	}()
	nn.MSELoss(graph.Parameter(g, "y", shapes.Make(dtypes.Float32, 4, 1)), graph.Parameter(g, "t", shapes.Make(dtypes.Float32, 4)))
}

// TestLinearInitialisesAsPyTorch: nn.Linear(256→128)'s weights and biases
// are U(±1/√256), PyTorch's bound, with a uniform's standard deviation
// (bound/√3); GoMLX's own dense layer (He-normal, std √(2/256)) is not.
func TestLinearInitialisesAsPyTorch(t *testing.T) {
	bound := readGolden(t).LinearBound
	for _, tc := range []struct {
		name  string
		layer func(*model.Scope, *graph.Node, int) *graph.Node
		torch bool
	}{{"nn.Linear", nn.Linear, true}, {"layers.DenseWithBias", func(s *model.Scope, x *graph.Node, out int) *graph.Node { return layers.DenseWithBias(s, x, out) }, false}} {
		t.Run(tc.name, func(t *testing.T) {
			store := model.NewStore()
			x := make([][]float32, 2)
			for i := range x {
				x[i] = make([]float32, 256)
			}
			run(t, store, func(s *model.Scope, x, _ *graph.Node) *graph.Node { return tc.layer(s.In("fc"), x, 128) }, x, x)
			w, err := store.GetVariable("/fc/dense/weights").Value()
			if err != nil {
				t.Fatal(err)
			}
			values := tensors.MustCopyFlatData[float32](w)
			maxAbs, sumSq := 0.0, 0.0
			for _, v := range values {
				maxAbs, sumSq = math.Max(maxAbs, math.Abs(float64(v))), sumSq+float64(v)*float64(v)
			}
			std := math.Sqrt(sumSq / float64(len(values)))
			asTorch := maxAbs <= bound && math.Abs(std-bound/math.Sqrt(3)) < 0.03*bound/math.Sqrt(3)
			if asTorch != tc.torch {
				t.Errorf("weights: max |w| %.4f (bound %.4f), std %.4f (uniform's %.4f): PyTorch's = %v, want %v",
					maxAbs, bound, std, bound/math.Sqrt(3), asTorch, tc.torch)
			}
			b, err := store.GetVariable("/fc/dense/biases").Value()
			if err != nil {
				t.Fatal(err)
			}
			nonZero := false
			for _, v := range tensors.MustCopyFlatData[float32](b) {
				nonZero = nonZero || v != 0
				if tc.torch && math.Abs(float64(v)) > bound {
					t.Errorf("bias %v outside ±%v", v, bound)
				}
			}
			if nonZero != tc.torch {
				t.Errorf("biases non-zero = %v, want %v (PyTorch draws them; GoMLX starts at 0)", nonZero, tc.torch)
			}
		})
	}
}
