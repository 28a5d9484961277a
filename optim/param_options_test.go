package optim

import (
	"fmt"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// paramGroupsGolden is testdata/param_groups_golden.json, written by
// tools/golden/gen_param_groups.py.
type paramGroupsGolden struct {
	Shapes  [][]int       `json:"shapes"`
	GroupOf []int         `json:"group_of"`
	Initial [][]float64   `json:"initial"`
	Grads   [][][]float64 `json:"grads"` // [step][param][element]
	Cases   []struct {
		Name        string  `json:"name"`
		LR          float64 `json:"lr"`
		WeightDecay float64 `json:"weight_decay"`
		Groups      []struct {
			LR          float64 `json:"lr"`
			WeightDecay float64 `json:"weight_decay"`
		} `json:"groups"`
		ParamsAfter [][][]float64 `json:"params_after"`
	} `json:"cases"`
}

// groupOptimizers builds each golden case's optimizer (its defaults, before
// the groups' overrides).
var groupOptimizers = map[string]func(lr, wd float64) *Optimizer{
	"adamw":        func(lr, wd float64) *Optimizer { return AdamW(lr).WithWeightDecay(wd) },
	"adam_l2":      func(lr, wd float64) *Optimizer { return Adam(lr).WithWeightDecay(wd) },
	"sgd_momentum": func(lr, wd float64) *Optimizer { return SGD(lr).WithMomentum(0.9).WithWeightDecay(wd) },
	"rmsprop":      func(lr, wd float64) *Optimizer { return RMSProp(lr).WithWeightDecay(wd) },
}

// TestApplyWithOptionsMatchesPyTorchGroups runs five steps of torch.optim
// with two param groups (decay and no-decay, each with its own lr) as
// ApplyWithOptions with one ParamOptions per parameter, and compares every
// parameter after every step with PyTorch's (float64, 1e-12 relative).
func TestApplyWithOptionsMatchesPyTorchGroups(t *testing.T) {
	var golden paramGroupsGolden
	loadGolden(t, "param_groups_golden.json", &golden)
	if len(golden.Cases) != len(groupOptimizers) {
		t.Errorf("golden file has %d cases, the test knows %d", len(golden.Cases), len(groupOptimizers))
	}
	for _, tc := range golden.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			build, ok := groupOptimizers[tc.Name]
			if !ok {
				t.Fatalf("no Go optimizer for golden case %q", tc.Name)
			}
			opt := build(tc.LR, tc.WeightDecay)
			store := model.NewStore()
			var params []*model.Variable
			for i, values := range golden.Initial {
				v, err := store.CreateVariable(fmt.Sprintf("/model/p%d", i), tensors.FromFlatDataAndDimensions(values, golden.Shapes[i]...))
				if err != nil {
					t.Fatal(err)
				}
				params = append(params, v)
			}
			exec, err := model.NewExec(testBackend(t), store, func(_ *model.Scope, grads []*graph.Node) []*graph.Node {
				g := grads[0].Graph()
				store.SetTraining(g, true)
				opts := make([]ParamOptions, len(params))
				for i := range params {
					group := tc.Groups[golden.GroupOf[i]]
					wd := group.WeightDecay
					opts[i] = ParamOptions{LRScale: graph.Scalar(g, dtypes.Float64, group.LR/tc.LR), WeightDecay: &wd}
				}
				opt.ApplyWithOptions(store, 0, params, grads, opts, nil)
				return []*graph.Node{graph.ScalarZero(g, dtypes.Float64)}
			})
			if err != nil {
				t.Fatal(err)
			}
			for s, grads := range golden.Grads {
				args := make([]any, len(grads))
				for i, gr := range grads {
					args[i] = tensors.FromFlatDataAndDimensions(gr, golden.Shapes[i]...)
				}
				if _, err := exec.Call(args...); err != nil {
					t.Fatal(err)
				}
				for i, p := range params {
					value, err := p.Value()
					if err != nil {
						t.Fatal(err)
					}
					checkClose(t, fmt.Sprintf("step %d param %d (group %d)", s+1, i, golden.GroupOf[i]),
						tensors.MustCopyFlatData[float64](value), tc.ParamsAfter[s][i], 1e-12)
				}
			}
		})
	}
}

// TestApplyWithOptionsNilIsApply: no options, or options that override
// nothing, give Apply's update exactly.
func TestApplyWithOptionsNilIsApply(t *testing.T) {
	var golden paramGroupsGolden
	loadGolden(t, "param_groups_golden.json", &golden)
	run := func(withOpts bool) [][]float64 {
		store := model.NewStore()
		var params []*model.Variable
		for i, values := range golden.Initial {
			v, _ := store.CreateVariable(fmt.Sprintf("/model/p%d", i), tensors.FromFlatDataAndDimensions(values, golden.Shapes[i]...))
			params = append(params, v)
		}
		exec, err := model.NewExec(testBackend(t), store, func(_ *model.Scope, grads []*graph.Node) []*graph.Node {
			store.SetTraining(grads[0].Graph(), true)
			var opts []ParamOptions
			if withOpts {
				opts = make([]ParamOptions, len(params))
			}
			AdamW(0.01).ApplyWithOptions(store, 0, params, grads, opts, nil)
			return []*graph.Node{graph.ScalarZero(grads[0].Graph(), dtypes.Float64)}
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, grads := range golden.Grads {
			args := make([]any, len(grads))
			for i, gr := range grads {
				args[i] = tensors.FromFlatDataAndDimensions(gr, golden.Shapes[i]...)
			}
			if _, err := exec.Call(args...); err != nil {
				t.Fatal(err)
			}
		}
		var out [][]float64
		for _, p := range params {
			value, _ := p.Value()
			out = append(out, tensors.MustCopyFlatData[float64](value))
		}
		return out
	}
	plain, empty := run(false), run(true)
	for i := range plain {
		checkClose(t, fmt.Sprintf("param %d", i), empty[i], plain[i], 0)
	}
}
