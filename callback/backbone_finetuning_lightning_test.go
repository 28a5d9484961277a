package callback_test

import (
	"encoding/json"
	"log/slog"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/batchnorm"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testenv"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/nn"
	"github.com/voltml/volt/optim"
	"github.com/voltml/volt/parity"
	"github.com/voltml/volt/statedict"
)

// lightningBackbone is what testdata/backbone_finetuning/record.py writes.
type lightningBackbone struct {
	X         [][]float32 `json:"x"`
	Y         [][]float32 `json:"y"`
	Epochs    int         `json:"epochs"`
	BatchSize int         `json:"batch_size"`
	Cases     map[string]struct {
		Initial map[string]any `json:"initial"`
		Losses  []float64      `json:"losses"`
		Groups  [][]struct {
			LR     float64  `json:"lr"`
			Params []string `json:"params"`
		} `json:"groups"`
		Final map[string]any `json:"final"`
	} `json:"cases"`
}

const backboneCache = "testdata/backbone_finetuning/lightning.json"

// recordBackboneFinetuning runs record.py in Lightning 2.2.5 and returns
// its output, or the cached recording (lightning.json) where Lightning
// cannot run; VOLT_REQUIRE_LIGHTNING=1 (set by .ci/run) makes that a
// failure. A fresh recording must agree with the cache.
func recordBackboneFinetuning(t *testing.T) (rec lightningBackbone, source string) {
	t.Helper()
	cached, err := os.ReadFile(backboneCache)
	if err != nil {
		t.Fatal(err)
	}
	var fresh []byte
	run, ok, why := testutil.LightningRunner(t, "..")
	if ok {
		if fresh, err = run("testdata/backbone_finetuning/record.py"); err != nil {
			t.Fatal(err)
		}
	}
	if fresh == nil {
		if v := testenv.Required("VOLT_REQUIRE_LIGHTNING"); v != "" {
			t.Fatalf("%s=1 and Lightning cannot run here: %s", v, why)
		}
		t.Logf("Lightning cannot run here (%s); comparing with %s", why, backboneCache)
		fresh, source = cached, backboneCache
	} else {
		source = "Lightning 2.2.5, recorded now"
	}
	if err := json.Unmarshal(fresh, &rec); err != nil {
		t.Fatalf("%s: %v", source, err)
	}
	if source != backboneCache {
		var old lightningBackbone
		if err := json.Unmarshal(cached, &old); err != nil {
			t.Fatalf("%s: %v", backboneCache, err)
		}
		for name, c := range rec.Cases {
			if o := old.Cases[name]; !closeFloats(o.Losses, c.Losses, 1e-6) {
				t.Errorf("case %s: %s's losses differ from Lightning's now (run record.py again: PYTHONPATH=<lsite>:../testdata/lightning /usr/bin/python3 record.py > lightning.json)", name, backboneCache)
			}
		}
	}
	return rec, source
}

func closeFloats(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}

// lightningNet is record.py's Net: a backbone of Linear(4, 8),
// BatchNorm1d(8), ReLU and Linear(8, 8), and a head Linear(8, 1) after a
// ReLU, with torch's names, starting from Lightning's initial state_dict.
type lightningNet struct {
	initial *statedict.StateDict
	stepLR  bool
	groups  []volt.ParamGroup
}

func (m *lightningNet) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	scope := s.Scope()
	defer m.initial.Apply(scope)
	backbone := scope.In("backbone")
	x := nn.TorchLinear(backbone.In("0"), b.Input(0), 8, true)
	x = batchnorm.New(backbone.In("1"), x, 1).Done()
	x = nn.TorchLinear(backbone.In("3"), nn.ReLU(x), 8, true)
	pred := nn.TorchLinear(scope.In("head"), nn.ReLU(x), 1, true)
	return nn.MSELoss(pred, b.Label(0))
}

func (m *lightningNet) ConfigureOptimizers() volt.Optimizers {
	o := volt.OptimizerSetup{Optimizer: optim.SGD(0.1).WithMomentum(0.9), Groups: m.groups}
	if m.stepLR {
		o.Scheduler = optim.NewStepLR(2, 0.5)
	}
	return volt.Optimizers{o}
}

// stateDictOf turns record.py's {key: nested list} into a state dict of
// float32 tensors (int64 for num_batches_tracked).
func stateDictOf(t *testing.T, values map[string]any) *statedict.StateDict {
	t.Helper()
	sd := statedict.New()
	for key, v := range values {
		if strings.HasSuffix(key, "num_batches_tracked") {
			sd.Set(key, tensors.FromValue(int64(v.(float64))))
			continue
		}
		var flat []float32
		var dims []int
		var walk func(v any, depth int)
		walk = func(v any, depth int) {
			switch x := v.(type) {
			case []any:
				if len(dims) == depth {
					dims = append(dims, len(x))
				}
				for _, e := range x {
					walk(e, depth+1)
				}
			case float64:
				flat = append(flat, float32(x))
			}
		}
		walk(v, 0)
		sd.Set(key, tensors.FromFlatDataAndDimensions(flat, dims...))
	}
	return sd
}

// epochLRs records, after each epoch's first step, the learning rate the
// step gave each trainable variable of the module, by torch name: the
// optimizer's rate, times the multiplier of the variable's group.
type epochLRs struct{ epochs []map[string]float64 }

func (e *epochLRs) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, idx int) error {
	if idx != 0 {
		return nil
	}
	setup, lr := t.Optimizers()[0], t.LearningRates()[0]
	lrs := map[string]float64{}
	for v := range t.Store().IterVariables() {
		if strings.HasPrefix(v.Path(), "/volt/") || !v.Trainable {
			continue
		}
		scale := 1.0
		for _, g := range setup.Groups {
			if g.ExcludeBatchNorm && batchnorm.IsAffine(t.Store(), v.Path()) {
				continue
			}
			if slices.ContainsFunc(g.Params, func(s string) bool { return volt.Selects(s, v.Path()) }) {
				scale = g.LRScale
				break
			}
		}
		lrs[strings.ReplaceAll(strings.TrimPrefix(v.Path(), "/"), "/", ".")] = lr * scale
	}
	e.epochs = append(e.epochs, lrs)
	return nil
}

// TestBackboneFinetuningAsLightning runs record.py's cases in volt:
// BackboneFinetuning with the defaults (unfrozen at epoch 2, λ 2,
// aligned), an epoch-dependent lambda_func with backbone_initial_lr and
// should_align=False, train_bn=False (which in Lightning 2.2.5 changes
// nothing: its freeze_before_training ignores it), and a StepLR schedule;
// and without it, torch param groups with their own "lr" (a ParamGroup
// selecting "backbone" with LR) and parameters frozen by name
// (Finetuning's Freeze "backbone.0"); and a BaseFinetuning that freezes
// the backbone with train_bn=False (Finetuning's FreezeBatchNorm: the batch
// norm's running statistics stay as they were), then unfreezes it at epoch
// 2 (they track again). Every step's loss, each parameter's
// learning rate in each epoch (or its absence from every group: frozen;
// the batch norm's stay in the first group at the optimizer's rate from
// the start) and the final state_dict, running statistics included, are
// Lightning's.
func TestBackboneFinetuningAsLightning(t *testing.T) {
	rec, source := recordBackboneFinetuning(t)
	examples := make(data.Slice, len(rec.X))
	for i := range rec.X {
		examples[i] = data.Example{Inputs: []data.Field{{Value: rec.X[i]}}, Labels: []data.Field{{Value: rec.Y[i]}}}
	}
	backbone := func(cfg callback.BackboneFinetuningConfig) func() []volt.Callback {
		return func() []volt.Callback { return []volt.Callback{callback.NewBackboneFinetuning(cfg)} }
	}
	configs := map[string]struct {
		callbacks func() []volt.Callback
		groups    []volt.ParamGroup
	}{
		"defaults":                  {callbacks: backbone(callback.BackboneFinetuningConfig{UnfreezeAtEpoch: 2})},
		"lambda_noalign_initial_lr": {callbacks: backbone(callback.BackboneFinetuningConfig{UnfreezeAtEpoch: 1, Lambda: func(e int) float64 { return 1 + float64(e)/4 }, NoAlign: true, InitialLR: 0.02})},
		"train_bn_false":            {callbacks: backbone(callback.BackboneFinetuningConfig{UnfreezeAtEpoch: 1})},
		"step_lr":                   {callbacks: backbone(callback.BackboneFinetuningConfig{UnfreezeAtEpoch: 1, InitialRatio: 0.5})},
		"discriminative_lr":         {groups: []volt.ParamGroup{{Params: []string{"backbone"}, LR: 0.01}}},
		"frozen_by_name": {callbacks: func() []volt.Callback {
			return []volt.Callback{callback.NewFinetuning(callback.FinetuningConfig{Freeze: []string{"backbone.0"}})}
		}},
		"freeze_train_bn_false": {callbacks: func() []volt.Callback {
			return []volt.Callback{callback.NewFinetuning(callback.FinetuningConfig{Freeze: []string{"backbone"}, FreezeBatchNorm: true})}
		}},
		"freeze_train_bn_false_unfreeze": {callbacks: func() []volt.Callback {
			return []volt.Callback{callback.NewFinetuning(callback.FinetuningConfig{Freeze: []string{"backbone"}, FreezeBatchNorm: true,
				Schedule: []callback.FinetuneStep{{Epoch: 2, Unfreeze: []string{"backbone"}}}})}
		}},
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range rec.Cases {
			if !yield(n) {
				return
			}
		}
	})
	if len(names) != len(configs) {
		t.Fatalf("%s has cases %v, the test %d", source, names, len(configs))
	}
	for _, name := range names {
		c := rec.Cases[name]
		t.Run(name, func(t *testing.T) {
			cfg, ok := configs[name]
			if !ok {
				t.Fatalf("no volt configuration for Lightning's case %q", name)
			}
			losses, lrs := &parity.Losses{}, &epochLRs{}
			var callbacks []volt.Callback
			if cfg.callbacks != nil {
				callbacks = cfg.callbacks()
			}
			tr, err := volt.NewTrainer(volt.Config{MaxEpochs: rec.Epochs, DisableLoggers: true, DisableModelSummary: true,
				DisableCheckpointing: true, Log: slog.New(slog.DiscardHandler), EnableProgressBar: volt.Ptr(false),
				Callbacks: append(callbacks, losses, lrs)})
			if err != nil {
				t.Fatal(err)
			}
			m := &lightningNet{initial: stateDictOf(t, c.Initial), stepLR: name == "step_lr", groups: cfg.groups}
			if err := tr.Fit(t.Context(), m, volt.Loaders{Train: &data.DataLoader{Dataset: examples, BatchSize: rec.BatchSize}}); err != nil {
				t.Fatal(err)
			}
			if len(losses.Values) != len(c.Losses) {
				t.Fatalf("%d steps, Lightning's %d", len(losses.Values), len(c.Losses))
			}
			worst := 0.0
			for i, want := range c.Losses {
				worst = math.Max(worst, math.Abs(losses.Values[i]-want))
			}
			if worst > 1e-5 {
				t.Errorf("losses differ from Lightning's by up to %.3g:\nvolt      %.6f\nLightning %.6f", worst, losses.Values, c.Losses)
			}
			for e, pg := range c.Groups {
				want := map[string]float64{}
				for _, g := range pg {
					for _, p := range g.Params {
						want[p] = g.LR
					}
				}
				got := lrs.epochs[e]
				for _, key := range slices.Sorted(maps.Keys(want)) {
					if g, ok := got[key]; !ok || math.Abs(g-want[key]) > 1e-7*want[key] {
						t.Errorf("epoch %d: %s: volt's lr %v (trained: %t), Lightning's %v", e, key, g, ok, want[key])
					}
				}
				for key := range got {
					if _, ok := want[key]; !ok {
						t.Errorf("epoch %d: volt trains %s, which is in none of Lightning's param groups", e, key)
					}
				}
			}
			final := stateDictOf(t, c.Final)
			worstW, at := 0.0, ""
			for _, key := range final.Keys() {
				v := tr.Store().GetVariable("/" + strings.ReplaceAll(key, ".", "/"))
				if v == nil {
					t.Fatalf("volt has no variable for Lightning's %s", key)
				}
				got, want := v.MustValue(), final.Get(key)
				if strings.HasSuffix(key, "num_batches_tracked") {
					if g, w := tensors.ToScalar[int64](got), tensors.ToScalar[int64](want); g != w {
						t.Errorf("%s: %d, Lightning's %d", key, g, w)
					}
					continue
				}
				g, w := tensors.MustCopyFlatData[float32](got), tensors.MustCopyFlatData[float32](want)
				for i := range w {
					if d := math.Abs(float64(g[i] - w[i])); d > worstW {
						worstW, at = d, key
					}
				}
			}
			if worstW > 1e-4 {
				t.Errorf("final weights differ from Lightning's by up to %.3g (at %s)", worstW, at)
			}
			t.Logf("%s: %d steps, losses max |Δ| %.2g, final state_dict max |Δ| %.2g (%s)", source, len(c.Losses), worst, worstW, at)
		})
	}
}

// TestFinetuningFreezeBatchNorm: a frozen scope's batch norm trains unless
// FreezeBatchNorm (Lightning's freeze with train_bn=True, the default, and
// train_bn=False); the scope's other parameters stay as loaded either way.
func TestFinetuningFreezeBatchNorm(t *testing.T) {
	b, err := os.ReadFile(backboneCache)
	if err != nil {
		t.Fatal(err)
	}
	var rec lightningBackbone
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	examples := make(data.Slice, len(rec.X))
	for i := range rec.X {
		examples[i] = data.Example{Inputs: []data.Field{{Value: rec.X[i]}}, Labels: []data.Field{{Value: rec.Y[i]}}}
	}
	initial := stateDictOf(t, rec.Cases["defaults"].Initial)
	for _, freezeBN := range []bool{false, true} {
		ft := callback.NewFinetuning(callback.FinetuningConfig{Freeze: []string{"backbone"}, FreezeBatchNorm: freezeBN})
		tr, err := volt.NewTrainer(volt.Config{MaxEpochs: 2, DisableLoggers: true, DisableModelSummary: true,
			DisableCheckpointing: true, Log: slog.New(slog.DiscardHandler), EnableProgressBar: volt.Ptr(false),
			Callbacks: []volt.Callback{ft}})
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Fit(t.Context(), &lightningNet{initial: initial}, volt.Loaders{Train: &data.DataLoader{Dataset: examples, BatchSize: 4}}); err != nil {
			t.Fatal(err)
		}
		for key, wantChanged := range map[string]bool{"backbone.0.weight": false, "backbone.3.bias": false,
			"backbone.1.weight": !freezeBN, "backbone.1.bias": !freezeBN, "head.weight": true} {
			got := tensors.MustCopyFlatData[float32](tr.Store().GetVariable("/" + strings.ReplaceAll(key, ".", "/")).MustValue())
			if changed := !slices.Equal(got, tensors.MustCopyFlatData[float32](initial.Get(key))); changed != wantChanged {
				t.Errorf("FreezeBatchNorm %t: %s changed = %t, want %t", freezeBN, key, changed, wantChanged)
			}
			if frozen := ft.Frozen("/" + strings.ReplaceAll(key, ".", "/")); frozen == wantChanged {
				t.Errorf("FreezeBatchNorm %t: Frozen(%s) = %t", freezeBN, key, frozen)
			}
		}
	}
}
