package torchinit_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	_ "github.com/gomlx/compute/gobackend" // the pure-Go backend runs the initialisers.
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/lstm"
	"github.com/gomlx/gomlx/ml/layers/norm"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/nn"
	"github.com/voltml/volt/torchinit"
)

// torchParam is one parameter of testdata/torch_init.json (written by
// tools/golden/gen_torchinit.py): PyTorch's name, shape and rule, and the
// moments of PyTorch's own draws.
type torchParam struct {
	Name   string  `json:"name"`
	Shape  []int   `json:"shape"`
	Dist   string  `json:"dist"`
	Bound  float64 `json:"bound"`
	FanIn  *int    `json:"fan_in"`
	MaxAbs float64 `json:"max_abs"`
	Mean   float64 `json:"mean"`
	Std    float64 `json:"std"`
}

// gomlxLayer builds, in a graph, the GoMLX layer equal to a PyTorch one and
// names, for each PyTorch parameter, the GoMLX variable holding it.
type gomlxLayer struct {
	input []int
	build func(scope *model.Scope, x *graph.Node)
	vars  map[string]string // PyTorch name -> GoMLX path
}

var goldenLayers = map[string]gomlxLayer{
	"linear_8_64": {[]int{2, 8}, func(s *model.Scope, x *graph.Node) { layers.DenseWithBias(s, x, 64) },
		map[string]string{"weight": "/dense/weights", "bias": "/dense/biases"}},
	"linear_64_1": {[]int{2, 64}, func(s *model.Scope, x *graph.Node) { layers.DenseWithBias(s, x, 1) },
		map[string]string{"weight": "/dense/weights", "bias": "/dense/biases"}},
	"linear_256_512": {[]int{2, 256}, func(s *model.Scope, x *graph.Node) { layers.DenseWithBias(s, x, 512) },
		map[string]string{"weight": "/dense/weights", "bias": "/dense/biases"}},
	"conv2d_3_16_k3": {[]int{1, 8, 8, 3}, func(s *model.Scope, x *graph.Node) {
		layers.Convolution(s, x).Channels(16).KernelSize(3).Done()
	}, map[string]string{"weight": "/conv/weights", "bias": "/conv/biases"}},
	"conv2d_16_32_k5x3": {[]int{1, 8, 8, 16}, func(s *model.Scope, x *graph.Node) {
		layers.Convolution(s, x).Channels(32).KernelSizePerAxis(5, 3).Done()
	}, map[string]string{"weight": "/conv/weights", "bias": "/conv/biases"}},
	"conv1d_4_6_k5": {[]int{1, 10, 4}, func(s *model.Scope, x *graph.Node) {
		layers.Convolution(s, x).Channels(6).KernelSize(5).Done()
	}, map[string]string{"weight": "/conv/weights", "bias": "/conv/biases"}},
	"embedding_1000_16": {nil, func(s *model.Scope, x *graph.Node) {
		layers.Embedding(s, graph.Const(x.Graph(), []int32{1, 2}), dtypes.Float32, 1000, 16)
	}, map[string]string{"weight": "/embeddings"}},
	"lstm_5_7": {[]int{2, 3, 5}, func(s *model.Scope, x *graph.Node) { lstm.New(s, x, 7).Done() },
		// GoMLX keeps both PyTorch biases in one variable.
		map[string]string{"weight_ih_l0": "/inputsW", "weight_hh_l0": "/recurrentW", "bias_ih_l0": "/biasesW", "bias_hh_l0": "/biasesW"}},
	// GoMLX has no GRU layer: volt's nn.GRU holds PyTorch's tensors.
	"gru_5_7": {[]int{2, 3, 5}, func(s *model.Scope, x *graph.Node) { nn.GRU(s, x, 7) },
		map[string]string{"weight_ih_l0": "/weight_ih", "weight_hh_l0": "/weight_hh", "bias_ih_l0": "/bias_ih", "bias_hh_l0": "/bias_hh"}},
	"layernorm_64": {[]int{2, 64}, func(s *model.Scope, x *graph.Node) { norm.LayerNorm(s, x, -1).Done() },
		map[string]string{"weight": "/layer_normalization/gain", "bias": "/layer_normalization/offset"}},
	"batchnorm2d_16": {[]int{2, 4, 4, 16}, func(s *model.Scope, x *graph.Node) {
		// The Go backend of compute v0.1.14 cannot build BatchNorm's op; its
		// variables exist before it panics.
		defer func() { _ = recover() }()
		norm.BatchNorm(s, x, -1).Done()
	},
		map[string]string{"weight": "/batch_normalization/scale", "bias": "/batch_normalization/offset"}},
}

func backend(t *testing.T) compute.Backend {
	t.Helper()
	b, err := compute.NewWithConfig("go")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// initialise traces layer into a new store (trace only: nothing runs but
// the initialisation), applies torchinit when torch is true, and returns
// the store and the rules applied.
func initialise(t *testing.T, b compute.Backend, layer gomlxLayer, seed int64, torch bool) (*model.Store, []torchinit.Rule) {
	t.Helper()
	store := model.NewStore()
	store.SetParam(model.ParamInitialSeed, seed)
	g := graph.NewGraph(b, "trace")
	input := layer.input
	if input == nil {
		input = []int{1}
	}
	x := graph.Parameter(g, "x", shapes.Make(dtypes.Float32, input...))
	scope := store.RootScope()
	layer.build(scope, x)
	var rules []torchinit.Rule
	if torch {
		rules = torchinit.Apply(scope)
	}
	if err := store.InitializeVariables(b, nil); err != nil {
		t.Fatal(err)
	}
	return store, rules
}

func values(t *testing.T, store *model.Store, path string) ([]float64, []int) {
	t.Helper()
	v := store.GetVariable(path)
	if v == nil {
		t.Fatalf("no variable %s; the store holds %v", path, paths(store))
	}
	value, err := v.Value()
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for _, x := range tensors.MustCopyFlatData[float32](value) {
		out = append(out, float64(x))
	}
	return out, v.Shape().Dimensions
}

func paths(store *model.Store) []string {
	var out []string
	for v := range store.IterVariables() {
		out = append(out, v.Path())
	}
	return out
}

// TestBoundsMatchPyTorch: for each PyTorch layer of the golden file, the
// equal GoMLX layer under torchinit.Apply holds PyTorch's number of
// values per parameter, draws from PyTorch's distribution (the bound or
// standard deviation torch.nn.init computes for that shape), and its draws
// have that distribution's moments; PyTorch's own draws, recorded in the
// golden file, are checked against the same bound (the rule read from
// PyTorch's sources is PyTorch's behaviour).
func TestBoundsMatchPyTorch(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "torch_init.json"))
	if err != nil {
		t.Fatalf("%v (regenerate with /usr/bin/python3 tools/golden/gen_torchinit.py)", err)
	}
	var golden struct {
		Layers []struct {
			Layer  string       `json:"layer"`
			Params []torchParam `json:"params"`
		} `json:"layers"`
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	b := backend(t)
	for _, gl := range golden.Layers {
		t.Run(gl.Layer, func(t *testing.T) {
			for _, p := range gl.Params {
				checkTorchDraws(t, p)
			}
			layer, ok := goldenLayers[gl.Layer]
			if !ok {
				t.Fatalf("no GoMLX layer for golden layer %q", gl.Layer)
			}
			store, rules := initialise(t, b, layer, 7, true)
			byPath := map[string]torchinit.Rule{}
			for _, r := range rules {
				byPath[r.Path] = r
			}
			sizes := map[string]int{}
			for _, p := range gl.Params {
				path := layer.vars[p.Name]
				sizes[path] += prod(p.Shape)
				got, _ := values(t, store, path)
				if p.Dist == "constant" {
					if _, ok := byPath[path]; ok {
						t.Errorf("%s: torchinit re-initialised a normalisation parameter", path)
					}
					for i, v := range got {
						if v != p.Bound {
							t.Fatalf("%s[%d] = %v, PyTorch's %s is %v", path, i, v, p.Name, p.Bound)
						}
					}
					continue
				}
				r, ok := byPath[path]
				if !ok {
					t.Fatalf("%s (PyTorch's %s): torchinit applied no rule; rules %v", path, p.Name, rules)
				}
				if r.Dist != p.Dist || math.Abs(r.Bound-p.Bound) > 1e-12*p.Bound {
					t.Errorf("%s: rule %s(%v), PyTorch's %s is %s(%v)", path, r.Dist, r.Bound, p.Name, p.Dist, p.Bound)
				}
				checkMoments(t, path, got, p.Dist, p.Bound)
			}
			for path, n := range sizes {
				got, _ := values(t, store, path)
				if len(got) != n {
					t.Errorf("%s holds %d values, PyTorch's parameters %d", path, len(got), n)
				}
			}
		})
	}
}

// checkTorchDraws checks PyTorch's recorded draws against the rule.
func checkTorchDraws(t *testing.T, p torchParam) {
	t.Helper()
	n := prod(p.Shape)
	switch p.Dist {
	case "uniform":
		if p.MaxAbs > p.Bound {
			t.Errorf("PyTorch's %s: max |x| %v above the bound %v", p.Name, p.MaxAbs, p.Bound)
		}
		if n >= 1000 && math.Abs(p.Std-p.Bound/math.Sqrt(3)) > 0.05*p.Bound/math.Sqrt(3) {
			t.Errorf("PyTorch's %s: std %v, U(±%v) has %v", p.Name, p.Std, p.Bound, p.Bound/math.Sqrt(3))
		}
	case "normal":
		if math.Abs(p.Std-p.Bound) > 0.05*p.Bound {
			t.Errorf("PyTorch's %s: std %v, want %v", p.Name, p.Std, p.Bound)
		}
	}
}

// checkMoments checks that values are drawn from U(−bound, bound) or
// N(0, bound²): within the support, and mean and standard deviation
// within 5 standard errors (and 1% of bound, the float32 rounding).
func checkMoments(t *testing.T, what string, values []float64, dist string, bound float64) {
	t.Helper()
	n := float64(len(values))
	var sum, sq, maxAbs float64
	for _, v := range values {
		sum += v
		sq += v * v
		maxAbs = max(maxAbs, math.Abs(v))
	}
	mean := sum / n
	std := math.Sqrt(sq/n - mean*mean)
	wantStd, kurtosisTerm := bound, 2.0 // normal: var(x²) = 2σ⁴
	if dist == "uniform" {
		wantStd, kurtosisTerm = bound/math.Sqrt(3), 0.8 // uniform: var(x²) = 4b⁴/45 = 0.8σ⁴
		if maxAbs > bound {
			t.Errorf("%s: max |x| %v above the bound %v", what, maxAbs, bound)
		}
		if n >= 1000 && maxAbs < 0.99*bound {
			t.Errorf("%s: max |x| %v, far inside the bound %v", what, maxAbs, bound)
		}
	}
	if tol := 5*wantStd/math.Sqrt(n) + 0.01*bound; math.Abs(mean) > tol {
		t.Errorf("%s: mean %v, want 0 ± %v", what, mean, tol)
	}
	// The sample std's standard error: σ·√(kurtosisTerm/n)/2.
	if n > 1 {
		if tol := 5*wantStd*math.Sqrt(kurtosisTerm/n)/2 + 0.01*bound; math.Abs(std-wantStd) > tol {
			t.Errorf("%s: std %v, want %v ± %v (n %v)", what, std, wantStd, tol, n)
		}
	}
}

func prod(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

// TestApplyIsSeededAndKeepsValues: the same seed draws the same values, a
// different one others, and without Apply GoMLX's default (He-normal,
// zero biases) stays; variables that have a value are left alone.
func TestApplyIsSeededAndKeepsValues(t *testing.T) {
	b := backend(t)
	layer := goldenLayers["linear_8_64"]
	s1, _ := initialise(t, b, layer, 1, true)
	s2, _ := initialise(t, b, layer, 1, true)
	s3, _ := initialise(t, b, layer, 2, true)
	plain, _ := initialise(t, b, layer, 1, false)
	w1, _ := values(t, s1, "/dense/biases")
	w2, _ := values(t, s2, "/dense/biases")
	w3, _ := values(t, s3, "/dense/biases")
	wp, _ := values(t, plain, "/dense/biases")
	if fmt.Sprint(w1) != fmt.Sprint(w2) {
		t.Error("the same seed drew different biases")
	}
	if fmt.Sprint(w1) == fmt.Sprint(w3) {
		t.Error("different seeds drew the same biases")
	}
	for _, v := range wp {
		if v != 0 {
			t.Fatalf("without torchinit the biases are %v, GoMLX's default is zeros", wp)
		}
	}
	// A second trace over initialised variables changes nothing.
	g := graph.NewGraph(b, "again")
	x := graph.Parameter(g, "x", shapes.Make(dtypes.Float32, 2, 8))
	layers.DenseWithBias(s1.RootScope(), x, 64)
	if rules := torchinit.Apply(s1.RootScope()); len(rules) != 0 {
		t.Errorf("Apply re-initialised variables with values: %v", rules)
	}
}

// TestApplyOnlyUnderScope: Apply(scope) leaves variables outside scope.
func TestApplyOnlyUnderScope(t *testing.T) {
	b := backend(t)
	store := model.NewStore()
	g := graph.NewGraph(b, "trace")
	x := graph.Parameter(g, "x", shapes.Make(dtypes.Float32, 2, 8))
	root := store.RootScope()
	layers.DenseWithBias(root.In("torch"), x, 4)
	layers.DenseWithBias(root.In("gomlx"), x, 4)
	rules := torchinit.Apply(root.At("torch"))
	if len(rules) != 2 || rules[0].Path[:7] != "/torch/" || rules[1].Path[:7] != "/torch/" {
		t.Errorf("rules %v, want the two variables under /torch", rules)
	}
}

// TestWeightLayouts: the fan_in of the weight layouts GoMLX's layers
// create, telling [in, out] from [out, in] and channels-last from
// channels-first by the bias.
func TestWeightLayouts(t *testing.T) {
	b := backend(t)
	tests := []struct {
		name   string
		weight []int
		bias   int
		fanIn  int
	}{
		{"dense [in, out]", []int{8, 64}, 64, 8},
		{"dense [out, in]", []int{64, 8}, 64, 8},
		{"dense without bias", []int{8, 64}, 0, 8},
		{"conv2d channels-last", []int{3, 3, 16, 32}, 32, 144},
		{"conv2d channels-first", []int{32, 16, 3, 3}, 32, 144},
		{"conv1d channels-last", []int{5, 4, 6}, 6, 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := model.NewStore()
			scope := store.RootScope().In("layer")
			g := graph.NewGraph(b, "trace")
			w := scope.VariableWithShape("weights", shapes.Make(dtypes.Float32, tc.weight...))
			w.NodeValue(g)
			if tc.bias > 0 {
				scope.VariableWithShape("biases", shapes.Make(dtypes.Float32, tc.bias)).NodeValue(g)
			}
			r, ok := torchinit.RuleFor(store, w)
			if !ok || math.Abs(r.Bound-1/math.Sqrt(float64(tc.fanIn))) > 1e-15 {
				t.Errorf("rule %+v (ok %v), want bound 1/√%d", r, ok, tc.fanIn)
			}
		})
	}
}
