package gpt_test

import (
	"math"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
	"github.com/voltml/volt/examples/chargpt/gpt"
)

// TestAttentionMatchesGoMLX: built on fresh stores with the same seed, the
// model with causalSelfAttention has the variables of the model with GoMLX's
// MultiHeadAttention, initialized to the same values (so created in the same
// order), and gives the same loss and gradients (to 1e-6 of each tensor's
// largest value, at least 1e-2: the key biases' gradients are rounding noise,
// softmax being blind to them).
func TestAttentionMatchesGoMLX(t *testing.T) {
	cfg := gpt.Config{Vocab: 11, Block: 8, Layers: 2, Heads: 2, Width: 16}
	tokens := [][]int32{{1, 2, 3, 4, 5, 6, 7, 8}, {8, 7, 6, 5, 4, 3, 2, 1}, {0, 10, 0, 10, 3, 3, 9, 9}}
	targets := [][]int32{{2, 3, 4, 5, 6, 7, 8, 9}, {7, 6, 5, 4, 3, 2, 1, 0}, {10, 0, 10, 3, 3, 9, 9, 4}}
	// run returns the names and values of the loss, the initial variables
	// and their gradients.
	run := func(gomlx bool) (names []string, values [][]float32) {
		defer gpt.UseGoMLXAttention(gomlx)()
		store := model.NewStore()
		store.SetParam(model.ParamInitialSeed, int64(42))
		var vars []string
		exec, err := model.NewExec(gobackend.GetBackend(), store, func(_ *model.Scope, tokens, targets *graph.Node) []*graph.Node {
			scope := store.RootScope().In("gpt").WithInitializer(initializer.RandomNormalFn(store.RootScope(), 0.3))
			loss := gpt.Loss(cfg.Logits(scope, tokens), targets)
			var nodes []*graph.Node
			for v := range store.IterVariables() {
				if v.DType() == dtypes.Float32 { // not the initializers' random state
					vars = append(vars, v.Path())
					nodes = append(nodes, v.NodeValue(tokens.Graph()))
				}
			}
			return append(append([]*graph.Node{loss}, nodes...), graph.Gradient(loss, nodes...)...)
		})
		if err != nil {
			t.Fatal(err)
		}
		defer exec.Finalize()
		outs, err := exec.Call(tokens, targets)
		if err != nil {
			t.Fatal(err)
		}
		for _, out := range outs {
			values = append(values, tensors.MustCopyFlatData[float32](out))
			out.FinalizeAll()
		}
		names = []string{"loss"}
		for _, v := range vars {
			names = append(names, v+" (initial)")
		}
		for _, v := range vars {
			names = append(names, "d/d"+v)
		}
		return names, values
	}
	wantNames, want := run(true)
	gotNames, got := run(false)
	if len(gotNames) != len(wantNames) || len(wantNames) < 3 {
		t.Fatalf("outputs %v, GoMLX's attention's %v", gotNames, wantNames)
	}
	for i := range want {
		if gotNames[i] != wantNames[i] {
			t.Fatalf("output %d is %s, GoMLX's attention's is %s", i, gotNames[i], wantNames[i])
		}
		scale := 1e-2
		for _, w := range want[i] {
			scale = math.Max(scale, math.Abs(float64(w)))
		}
		for j := range want[i] {
			if diff := math.Abs(float64(got[i][j] - want[i][j])); diff > 1e-6*scale {
				t.Fatalf("%s[%d] = %g, GoMLX's attention gives %g (largest value %g)", gotNames[i], j, got[i][j], want[i][j], scale)
			}
		}
	}
}
