package volt_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model/initializer"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// zeroGradHeads is two dense heads (/a, /b) whose loss has zero gradient:
// an SGD step then only applies weight decay, p ← p·(1 − lr·scale·wd), so
// each group's decay and learning rate show exactly in the weights.
type zeroGradHeads struct {
	opt    *optim.Optimizer
	groups []volt.ParamGroup
}

func (m *zeroGradHeads) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	x := b.Input(0)
	scope := s.Scope()
	scope = scope.WithInitializer(initializer.RandomUniformFn(scope, 0.5, 1)) // non-zero biases
	pred := graph.Add(layers.DenseWithBias(scope.In("a"), x, 1), layers.DenseWithBias(scope.In("b"), x, 1))
	return graph.MulScalar(graph.ReduceAllSum(pred), 0)
}

func (m *zeroGradHeads) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimizers{{Optimizer: m.opt, Groups: m.groups}}
}

// initialWeights records every float64 variable under prefix before the
// first training batch.
type initialWeights struct {
	t      *testing.T
	values map[string][]float64
}

func (c *initialWeights) OnTrainBatchStart(tr *volt.Trainer, _ *data.Batch, _ int) error {
	if c.values == nil {
		c.values = floats(c.t, tr, "/")
	}
	return nil
}

// TestParamGroupWeightDecayByNameAndScope: NoWeightDecay("biases") keeps
// every bias (the first matching group wins), a scope group decays /b's
// weights at its own rate and decay, and the rest use the optimizer's.
func TestParamGroupWeightDecayByNameAndScope(t *testing.T) {
	const lr, wd, steps = 0.1, 0.5, 4
	m := &zeroGradHeads{opt: optim.SGD(lr).WithWeightDecay(wd), groups: []volt.ParamGroup{
		volt.NoWeightDecay("biases"),
		{Params: []string{"/b"}, LRScale: 3, WeightDecay: volt.Decay(0.25)},
	}}
	init := &initialWeights{t: t}
	tr := fitBoring(t, volt.Config{MaxEpochs: 1, Precision: "64-true", Callbacks: []volt.Callback{init}}, loaderOf(regression(16, 1), 4), m)
	if tr.GlobalStep() != steps {
		t.Fatalf("global step %d, want %d", tr.GlobalStep(), steps)
	}
	factor := map[string]float64{
		"/a/dense/weights": math.Pow(1-lr*wd, steps),
		"/b/dense/weights": math.Pow(1-lr*3*0.25, steps),
		"/a/dense/biases":  1,
		"/b/dense/biases":  1,
	}
	got := floats(t, tr, "/")
	for path, f := range factor {
		before, after := init.values[path], got[path]
		if len(before) == 0 || len(before) != len(after) {
			t.Fatalf("%s: %d values before, %d after", path, len(before), len(after))
		}
		for i := range before {
			if want := before[i] * f; math.Abs(after[i]-want) > 1e-15*math.Abs(want) {
				t.Errorf("%s[%d] = %.17g, want %.17g (initial × %.6g)", path, i, after[i], want, f)
			}
		}
	}
}

// groupedAdamW is the boring model under AdamW with nanoGPT's split.
type groupedAdamW struct{ boring }

func (groupedAdamW) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimizers{{Optimizer: optim.AdamW(0.01).WithWeightDecay(0.1),
		Groups: []volt.ParamGroup{volt.NoWeightDecay("biases")}}}
}

// TestParamGroupsResume: a run with weight-decay groups resumed from a
// mid-epoch checkpoint ends with the uninterrupted run's weights, bitwise.
func TestParamGroupsResume(t *testing.T) {
	cfg := quiet(volt.Config{MaxEpochs: 2})
	p := fitAndResume(t, cfg, func() volt.Module { return &groupedAdamW{} }, 5, "batch")
	wu, wr := weights(t, p.u), weights(t, p.r)
	if !equalWeights(wu, wr) {
		t.Errorf("weights differ after resume")
	}
}

// TestParamGroupValidation names the group and field of a bad group.
func TestParamGroupValidation(t *testing.T) {
	tests := []struct {
		name  string
		group volt.ParamGroup
		want  string
	}{
		{"no selector", volt.ParamGroup{LRScale: 1}, "Groups[0].Params and Names are both empty"},
		{"name that selects nothing", volt.ParamGroup{Params: []string{"dense"}, LRScale: 1}, `Groups[0].Params[0] "dense" selects no variable; the module's top-level names are a, b`},
		{"scope that selects nothing", volt.ParamGroup{Params: []string{"/a", "/c"}, LRScale: 1}, `Groups[0].Params[1] "/c" selects no variable`},
		{"neither scope nor name", volt.ParamGroup{Params: []string{"a/dense"}, LRScale: 1}, `Groups[0].Params[0]: "a/dense" is neither a scope path`},
		{"bad name pattern", volt.ParamGroup{Params: []string{"a["}, LRScale: 1}, `Groups[0].Params[0]: "a[" is not a valid name pattern`},
		{"LR and LRScale", volt.ParamGroup{Params: []string{"a"}, LR: 0.01, LRScale: 1}, "Groups[0].LR (0.01) and LRScale (1) are both set: set one"},
		{"negative LR", volt.ParamGroup{Params: []string{"a"}, LR: -1}, "Groups[0].LR must be a finite number > 0"},
		{"bad pattern", volt.ParamGroup{Names: []string{"[bias"}, LRScale: 1}, `Groups[0].Names[0] "[bias"`},
		{"pattern with a slash", volt.ParamGroup{Names: []string{"dense/biases"}}, `Groups[0].Names[0] "dense/biases"`},
		{"negative decay", volt.ParamGroup{Names: []string{"biases"}, LRScale: 1, WeightDecay: volt.Decay(-1)}, "Groups[0].WeightDecay must be a finite number >= 0, got -1"},
		{"NaN scale", volt.ParamGroup{Names: []string{"biases"}, LRScale: math.NaN()}, "Groups[0].LRScale must be a finite number >= 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := volt.NewTrainer(quiet(volt.Config{MaxEpochs: 1}))
			if err != nil {
				t.Fatal(err)
			}
			m := &zeroGradHeads{opt: optim.SGD(0.1), groups: []volt.ParamGroup{tc.group}}
			err = tr.Fit(t.Context(), m, loaderOf(regression(8, 1), 4))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "optimizer 0") {
				t.Errorf("Fit error %v, want one naming optimizer 0 and %q", err, tc.want)
			}
		})
	}
}
