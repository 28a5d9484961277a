package nn_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/nn"
	"github.com/voltml/volt/statedict"
)

// initStats is one parameter's statistics in testdata/init.json.
type initStats struct {
	Std    float64 `json:"std"`
	MaxAbs float64 `json:"max_abs"`
	Mean   float64 `json:"mean"`
	Shape  []int   `json:"shape"`
}

// TestTorchLayersInitialiseAsTorch: each torch-named layer's fresh
// parameters have torch's names and shapes (init_gen.py's state_dict
// keys), torch's constants where torch sets constants, and torch's
// spread elsewhere: a standard deviation within sampling error of
// torch's, and no value beyond a uniform's bound.
func TestTorchLayersInitialiseAsTorch(t *testing.T) {
	var golden map[string]map[string]initStats
	readJSON(t, "testdata/init.json", &golden)
	f32 := func(dims ...int) shapes.Shape { return shapes.Make(dtypes.Float32, dims...) }
	for _, tc := range []struct {
		name  string
		input shapes.Shape
		build func(*model.Scope, *graph.Node) *graph.Node
	}{
		{"conv2d_64_128_3", f32(1, 64, 3, 3), func(s *model.Scope, x *graph.Node) *graph.Node { return nn.Conv2d(s, x, 128, 3).Done() }},
		{"conv2d_groups_32_64_3_g4", f32(1, 32, 3, 3), func(s *model.Scope, x *graph.Node) *graph.Node { return nn.Conv2d(s, x, 64, 3).Groups(4).Done() }},
		{"conv1d_16_256_5", f32(1, 16, 5), func(s *model.Scope, x *graph.Node) *graph.Node { return nn.Conv1d(s, x, 256, 5).Done() }},
		{"linear_256_512", f32(1, 256), func(s *model.Scope, x *graph.Node) *graph.Node { return nn.TorchLinear(s, x, 512, true) }},
		{"embedding_1000_64", shapes.Make(dtypes.Int64, 2), func(s *model.Scope, x *graph.Node) *graph.Node {
			return nn.Embedding(s, x, 1000, 64, dtypes.Float32)
		}},
		{"groupnorm_4_64", f32(2, 64, 2), func(s *model.Scope, x *graph.Node) *graph.Node { return nn.GroupNorm(s, x, 4) }},
		{"layernorm_64", f32(2, 64), func(s *model.Scope, x *graph.Node) *graph.Node { return nn.TorchLayerNorm(s, x) }},
		{"mha_128_4", f32(1, 2, 128), func(s *model.Scope, x *graph.Node) *graph.Node {
			out, _ := nn.MultiheadAttention(s, x, x, x, 4).Done()
			return out
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := golden[tc.name]
			store := model.NewStore()
			if err := store.SetRNGStateFromSeed(39); err != nil {
				t.Fatal(err)
			}
			exec, err := model.NewExec1(backend(t), store, func(s *model.Scope, x *graph.Node) *graph.Node { return tc.build(s.In("layer"), x) })
			if err != nil {
				t.Fatal(err)
			}
			if _, err := exec.Call(tensors.FromShape(tc.input)); err != nil {
				t.Fatal(err)
			}
			sd, err := statedict.FromScope(store.RootScope().In("layer"))
			if err != nil {
				t.Fatal(err)
			}
			if len(sd.Keys()) != len(want) {
				t.Errorf("keys %v, torch's %d: %v", sd.Keys(), len(want), want)
			}
			for key, w := range want {
				v := sd.Get(key)
				if v == nil {
					t.Errorf("no %q among %s", key, strings.Join(sd.Keys(), ", "))
					continue
				}
				values := tensors.MustCopyFlatData[float32](v)
				n := float64(len(values))
				mean, sumSq, maxAbs := 0.0, 0.0, 0.0
				for _, x := range values {
					mean += float64(x) / n
					maxAbs = math.Max(maxAbs, math.Abs(float64(x)))
				}
				for _, x := range values {
					sumSq += (float64(x) - mean) * (float64(x) - mean)
				}
				std := math.Sqrt(sumSq / n)
				switch {
				case w.Std == 0: // a constant: torch's exactly
					if std != 0 || mean != w.Mean {
						t.Errorf("%s: mean %v std %v, torch's constant %v", key, mean, std, w.Mean)
					}
				default:
					tol := 4/math.Sqrt(2*n) + 0.01
					if math.Abs(std-w.Std) > tol*w.Std {
						t.Errorf("%s: std %.4g, torch's %.4g (tolerance %.0f%%)", key, std, w.Std, tol*100)
					}
					if uniform := w.MaxAbs < 1.8*w.Std; uniform && maxAbs > w.MaxAbs*(1+3/n) { // n samples fall short of the bound by about 1/n of it
						t.Errorf("%s: max |value| %.4g beyond torch's uniform bound %.4g", key, maxAbs, w.MaxAbs)
					}
				}
			}
		})
	}
}
