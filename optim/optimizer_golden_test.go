package optim

import (
	"fmt"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// optimizerGolden is testdata/optimizers_golden.json.
type optimizerGolden struct {
	Shapes  [][]int       `json:"shapes"`
	Initial [][]float64   `json:"initial"`
	Grads   [][][]float64 `json:"grads"` // [step][param][element]
	Cases   []struct {
		Name  string `json:"name"`
		Kind  Kind   `json:"kind"`
		Hyper struct {
			LR          float64    `json:"lr"`
			WeightDecay float64    `json:"weight_decay"`
			Momentum    float64    `json:"momentum"`
			Dampening   float64    `json:"dampening"`
			Nesterov    bool       `json:"nesterov"`
			Betas       [2]float64 `json:"betas"`
			Eps         float64    `json:"eps"`
			Alpha       float64    `json:"alpha"`
		} `json:"hyper"`
		ParamsAfter [][][]float64 `json:"params_after"` // [step][param][element]
	} `json:"cases"`
}

// goldenOptimizers builds, with volt's constructors, the optimizer of each
// golden case: comparing their fields to PyTorch's param_groups also checks
// the defaults.
var goldenOptimizers = map[string]func() *Optimizer{
	"sgd":                       func() *Optimizer { return SGD(0.1) },
	"sgd_momentum":              func() *Optimizer { return SGD(0.1).WithMomentum(0.9) },
	"sgd_momentum_dampening":    func() *Optimizer { return SGD(0.1).WithMomentum(0.9).WithDampening(0.1) },
	"sgd_nesterov":              func() *Optimizer { return SGD(0.1).WithMomentum(0.9).WithNesterov() },
	"sgd_weight_decay":          func() *Optimizer { return SGD(0.1).WithWeightDecay(0.01) },
	"sgd_momentum_weight_decay": func() *Optimizer { return SGD(0.1).WithMomentum(0.9).WithWeightDecay(0.01) },
	"adam":                      func() *Optimizer { return Adam(0.01) },
	"adam_weight_decay":         func() *Optimizer { return Adam(0.01).WithWeightDecay(0.1) },
	"adamw":                     func() *Optimizer { return AdamW(0.01) },
	"adamw_betas":               func() *Optimizer { return AdamW(0.01).WithBetas(0.8, 0.99).WithWeightDecay(0.05) },
	"rmsprop":                   func() *Optimizer { return RMSProp(0.01) },
	"rmsprop_momentum":          func() *Optimizer { return RMSProp(0.01).WithMomentum(0.9) },
	"rmsprop_weight_decay":      func() *Optimizer { return RMSProp(0.01).WithWeightDecay(0.01) },
}

// optimizerHarness runs opt.Apply on float64 variables created with initial
// values, one compiled step per call.
type optimizerHarness struct {
	store  *model.Store
	params []*model.Variable
	exec   *model.Exec
	shapes [][]int
}

// newOptimizerHarness creates the variables and compiles the step: its inputs
// are the gradients followed by a boolean gate (used when gated is true).
func newOptimizerHarness(t *testing.T, opt *Optimizer, shapes [][]int, initial [][]float64, gated bool) *optimizerHarness {
	t.Helper()
	h := &optimizerHarness{store: model.NewStore(), shapes: shapes}
	for i, values := range initial {
		v, err := h.store.CreateVariable(fmt.Sprintf("/model/p%d", i), tensors.FromFlatDataAndDimensions(values, shapes[i]...))
		if err != nil {
			t.Fatalf("creating parameter %d: %v", i, err)
		}
		h.params = append(h.params, v)
	}
	exec, err := model.NewExec(testBackend(t), h.store, func(_ *model.Scope, inputs []*graph.Node) []*graph.Node {
		h.store.SetTraining(inputs[0].Graph(), true) // else the Go backend embeds the parameters as constants
		grads := inputs[:len(h.params)]
		var gate *graph.Node
		if gated {
			gate = inputs[len(h.params)]
		}
		opt.Apply(h.store, 0, h.params, grads, gate)
		return []*graph.Node{graph.ScalarZero(inputs[0].Graph(), dtypes.Float64)}
	})
	if err != nil {
		t.Fatalf("compiling the step: %v", err)
	}
	h.exec = exec
	return h
}

// step applies grads (one flat slice per parameter), gated by gate when the
// harness is gated.
func (h *optimizerHarness) step(t *testing.T, grads [][]float64, gate *bool) {
	t.Helper()
	args := make([]any, 0, len(grads)+1)
	for i, g := range grads {
		args = append(args, tensors.FromFlatDataAndDimensions(g, h.shapes[i]...))
	}
	if gate != nil {
		args = append(args, tensors.FromScalar(*gate))
	}
	if _, err := h.exec.Call(args...); err != nil {
		t.Fatalf("running the step: %v", err)
	}
}

// values returns the current value of every variable under prefix (all of
// them when prefix is ""), by path.
func (h *optimizerHarness) values(t *testing.T) map[string][]float64 {
	t.Helper()
	out := map[string][]float64{}
	for v := range h.store.IterVariables() {
		value, err := v.Value()
		if err != nil {
			t.Fatalf("reading %s: %v", v.Path(), err)
		}
		switch value.DType() {
		case dtypes.Float64:
			out[v.Path()] = tensors.MustCopyFlatData[float64](value)
		case dtypes.Int64:
			for _, x := range tensors.MustCopyFlatData[int64](value) {
				out[v.Path()] = append(out[v.Path()], float64(x))
			}
		default:
			t.Fatalf("variable %s has unexpected dtype %s", v.Path(), value.DType())
		}
	}
	return out
}

// param returns the flat value of parameter i.
func (h *optimizerHarness) param(t *testing.T, i int) []float64 {
	t.Helper()
	value, err := h.params[i].Value()
	if err != nil {
		t.Fatalf("reading parameter %d: %v", i, err)
	}
	return tensors.MustCopyFlatData[float64](value)
}

// TestApplyMatchesPyTorch runs five steps of every optimizer configuration on
// fixed float64 parameters and gradients and compares the parameters after
// each step with torch.optim's.
func TestApplyMatchesPyTorch(t *testing.T) {
	var golden optimizerGolden
	loadGolden(t, "optimizers_golden.json", &golden)
	if len(golden.Cases) != len(goldenOptimizers) {
		t.Errorf("golden file has %d cases, the test knows %d", len(golden.Cases), len(goldenOptimizers))
	}
	for _, tc := range golden.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			build, ok := goldenOptimizers[tc.Name]
			if !ok {
				t.Fatalf("no Go optimizer for golden case %q", tc.Name)
			}
			opt := build()
			if err := opt.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			hy := tc.Hyper
			want := Optimizer{Kind: tc.Kind, LR: hy.LR, WeightDecay: hy.WeightDecay, Momentum: hy.Momentum,
				Dampening: hy.Dampening, Nesterov: hy.Nesterov, Betas: hy.Betas, Eps: hy.Eps, Alpha: hy.Alpha}
			if tc.Kind == KindSGD {
				want.Eps = 0
			}
			if *opt != want {
				t.Fatalf("optimizer config = %+v, PyTorch's = %+v", *opt, want)
			}
			h := newOptimizerHarness(t, opt, golden.Shapes, golden.Initial, false)
			for s, grads := range golden.Grads {
				h.step(t, grads, nil)
				for i := range h.params {
					checkClose(t, fmt.Sprintf("step %d param %d", s+1, i), h.param(t, i), tc.ParamsAfter[s][i], 1e-12)
				}
			}
		})
	}
}

// TestApplyGate checks that a false gate leaves every parameter and every
// optimizer state (step counter included) unchanged, and that the gated
// sequence then continues exactly as PyTorch's ungated one.
func TestApplyGate(t *testing.T) {
	var golden optimizerGolden
	loadGolden(t, "optimizers_golden.json", &golden)
	gates := []bool{true, false, false, true, true, false, true, true}
	for _, tc := range golden.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			h := newOptimizerHarness(t, goldenOptimizers[tc.Name](), golden.Shapes, golden.Initial, true)
			applied := 0
			for k, gate := range gates {
				before := h.values(t)
				// Skipped steps get the next gradient too: it must not leak in.
				h.step(t, golden.Grads[min(applied, len(golden.Grads)-1)], &gate)
				after := h.values(t)
				if !gate {
					if len(after) != len(before) {
						t.Fatalf("call %d (gate false): %d variables before, %d after", k, len(before), len(after))
					}
					for path, v := range after {
						if prev, ok := before[path]; ok {
							checkClose(t, fmt.Sprintf("call %d (gate false) %s", k, path), v, prev, 0)
						} else if path == StatePrefix(0)+"/lr" {
							continue
						} else {
							// State created by this call must still be its zero value.
							checkClose(t, fmt.Sprintf("call %d (gate false) new %s", k, path), v, make([]float64, len(v)), 0)
						}
					}
					continue
				}
				for i := range h.params {
					checkClose(t, fmt.Sprintf("call %d (step %d) param %d", k, applied+1, i), h.param(t, i), tc.ParamsAfter[applied][i], 1e-12)
				}
				applied++
			}
			if applied != len(golden.Grads) {
				t.Fatalf("test applied %d steps, golden has %d", applied, len(golden.Grads))
			}
		})
	}
}
