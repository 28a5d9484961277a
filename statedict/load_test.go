package statedict_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/statedict"
)

// netVariable is one variable of gen.py's Net, as a volt model built with
// torch's names would create it.
type netVariable struct {
	path  string
	shape shapes.Shape
}

// netVariables are Net's state_dict entries as GoMLX variables.
func netVariables() []netVariable {
	f32 := func(dims ...int) shapes.Shape { return shapes.Make(dtypes.Float32, dims...) }
	return []netVariable{
		{"conv/weight", f32(3, 2, 3, 3)}, {"conv/bias", f32(3)},
		{"bn/weight", f32(3)}, {"bn/bias", f32(3)}, {"bn/running_mean", f32(3)}, {"bn/running_var", f32(3)},
		{"bn/num_batches_tracked", shapes.Make(dtypes.Int64)},
		{"fc/weight", f32(2, 4)}, {"fc/bias", f32(2)},
	}
}

// newScope returns scope "/net" of a new store holding vars, zero-valued.
func newScope(t *testing.T, vars []netVariable) *model.Scope {
	t.Helper()
	scope := model.NewStore().RootScope().In("net")
	for _, v := range vars {
		scope.Store().VariableWithValue(model.JoinPath(scope.Scope(), v.path), tensors.FromShape(v.shape))
	}
	return scope
}

// scopeValues reads the variables under scope back as a state dict.
func scopeValues(t *testing.T, scope *model.Scope) *statedict.StateDict {
	t.Helper()
	sd, err := statedict.FromScope(scope)
	if err != nil {
		t.Fatal(err)
	}
	return sd
}

// TestLoadSetsTorchValues: every format loads strictly into Net's
// variables (keys "conv.weight" ↔ "/net/conv/weight"), with torch's values.
func TestLoadSetsTorchValues(t *testing.T) {
	g := readGoldens(t)
	for _, tc := range []struct {
		file string
		opts []statedict.Option
	}{
		{"net.pt", nil}, {"net_legacy.pt", nil}, {"net.safetensors", nil},
		{"lightning.ckpt", []statedict.Option{statedict.StripPrefix("model.")}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			sd, err := statedict.Read("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			scope := newScope(t, netVariables())
			report, err := sd.Load(scope, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if len(report.Loaded) != len(g.Net) || len(report.Missing)+len(report.Unexpected) != 0 {
				t.Errorf("report %s", report)
			}
			checkTensors(t, scopeValues(t, scope), g.Net, "")
		})
	}
}

// TestLoadErrors: a wrong file, a renamed key, a wrong shape and a wrong
// dtype each fail with a *LoadError naming the keys (and both shapes),
// leaving the variables as they were.
func TestLoadErrors(t *testing.T) {
	renamed := netVariables()
	renamed[7].path = "head/weight" // fc.weight → head.weight
	reshaped := netVariables()
	reshaped[7].shape = shapes.Make(dtypes.Float32, 4, 2)
	retyped := netVariables()
	retyped[6].shape = shapes.Make(dtypes.Int32)
	for _, tc := range []struct {
		name, file string
		vars       []netVariable
		opts       []statedict.Option
		want       []string
	}{
		{"wrong file", "gpt2.pt", netVariables(), nil, []string{
			"missing keys, in the model and not in the file (9): conv.weight, conv.bias, bn.weight",
			"unexpected keys, in the file and not in the model (2): h.0.attn.c_attn.weight, h.0.attn.c_attn.bias",
			"statedict.NonStrict()"}},
		{"renamed key", "net.pt", renamed, nil, []string{
			"missing keys, in the model and not in the file (1): head.weight",
			"unexpected keys, in the file and not in the model (1): fc.weight"}},
		{"wrong shape", "net.pt", reshaped, nil, []string{
			`size or dtype mismatch for "fc.weight": the file has float32[2, 4], the model float32[4, 2]`,
			`loads with statedict.Exclude("fc.") and statedict.NonStrict()`}},
		{"wrong shape under NonStrict", "net.pt", reshaped, []statedict.Option{statedict.NonStrict()}, []string{
			`size or dtype mismatch for "fc.weight"`}},
		{"wrong dtype", "net.safetensors", retyped, nil, []string{
			`size or dtype mismatch for "bn.num_batches_tracked": the file has int64[], the model int32[]`}},
		{"prefixed keys", "lightning.ckpt", netVariables(), nil, []string{
			`the file's keys start with "model." where the model's do not: load with statedict.StripPrefix("model.")`}},
		{"unprefixed keys", "net.pt", netVariables(), []statedict.Option{statedict.AddPrefix("backbone.")}, []string{
			`the file's keys start with "backbone." where the model's do not`}},
		{"float32 into float64", "net.pt", func() []netVariable {
			v := netVariables()
			v[0].shape = shapes.Make(dtypes.Float64, 3, 2, 3, 3)
			return v
		}(), nil, []string{`"conv.weight": the file has float32[3, 2, 3, 3], the model float64[3, 2, 3, 3]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sd, err := statedict.Read("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			scope := newScope(t, tc.vars)
			before := scopeValues(t, scope)
			_, err = sd.Load(scope, tc.opts...)
			var lerr *statedict.LoadError
			if !errors.As(err, &lerr) {
				t.Fatalf("error %v, want a *statedict.LoadError", err)
			}
			for _, want := range append(tc.want, "testdata/"+tc.file, `scope "/net"`) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error\n%v\ndoes not say %q", err, want)
				}
			}
			after := scopeValues(t, scope)
			for _, key := range before.Keys() {
				if !slices.Equal(float64s(t, before.Get(key)), float64s(t, after.Get(key))) {
					t.Errorf("%s changed by a failed load", key)
				}
			}
		})
	}
}

// TestNonStrictReportsWhatItSkipped: under NonStrict the matching keys
// load and the report lists the missing and unexpected ones.
func TestNonStrictReportsWhatItSkipped(t *testing.T) {
	g := readGoldens(t)
	vars := append(netVariables()[2:], netVariable{"extra/weight", shapes.Make(dtypes.Float32, 2)}) // no conv
	sd, err := statedict.Read("testdata/net.pt")
	if err != nil {
		t.Fatal(err)
	}
	scope := newScope(t, vars)
	report, err := sd.Load(scope, statedict.NonStrict())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(report.Missing, []string{"extra.weight"}) || !slices.Equal(report.Unexpected, []string{"conv.weight", "conv.bias"}) || len(report.Loaded) != 7 {
		t.Errorf("report %s", report)
	}
	for _, want := range []string{"missing keys, in the model and not in the file, kept their initial values (1): extra.weight",
		"unexpected keys, in the file and not in the model, skipped (2): conv.weight, conv.bias"} {
		if !strings.Contains(report.String(), want) {
			t.Errorf("report\n%s\ndoes not say %q", report, want)
		}
	}
	got := scopeValues(t, scope)
	if !slices.Equal(float64s(t, got.Get("fc.weight")), g.Net["fc.weight"].Values) {
		t.Errorf("fc.weight not loaded")
	}
	if !slices.Equal(float64s(t, got.Get("extra.weight")), []float64{0, 0}) {
		t.Errorf("extra.weight changed")
	}
}

// TestConvertDTypes: with ConvertDTypes a float32 file loads into a
// float64 model, the values exact; the report names the converted keys.
func TestConvertDTypes(t *testing.T) {
	g := readGoldens(t)
	vars := netVariables()
	for i := range vars {
		if vars[i].shape.DType == dtypes.Float32 {
			vars[i].shape.DType = dtypes.Float64
		}
	}
	sd, err := statedict.Read("testdata/net.pt")
	if err != nil {
		t.Fatal(err)
	}
	scope := newScope(t, vars)
	report, err := sd.Load(scope, statedict.ConvertDTypes())
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Converted) != 8 {
		t.Errorf("converted %v, want the 8 float tensors", report.Converted)
	}
	got := scopeValues(t, scope)
	for key, want := range g.Net {
		if v := got.Get(key); !slices.Equal(float64s(t, v), want.Values) {
			t.Errorf("%s: %v, want %v", key, float64s(t, v), want.Values)
		}
	}
}

// TestGPT2Conv1DTransposes: Hugging Face GPT-2's Conv1D weight [in, out]
// loads into an nn.Linear-layout variable [out, in], transposed, and
// FromScope with the same option writes it back as the file had it.
func TestGPT2Conv1DTransposes(t *testing.T) {
	g := readGoldens(t)
	sd, err := statedict.Read("testdata/gpt2.pt")
	if err != nil {
		t.Fatal(err)
	}
	scope := newScope(t, []netVariable{
		{"h/0/attn/c_attn/weight", shapes.Make(dtypes.Float32, 6, 4)},
		{"h/0/attn/c_attn/bias", shapes.Make(dtypes.Float32, 6)},
	})
	if _, err := sd.Load(scope); err == nil || !strings.Contains(err.Error(), "float32[4, 6], the model float32[6, 4]") {
		t.Errorf("without GPT2Conv1D: error %v, want the shape mismatch", err)
	}
	if _, err := sd.Load(scope, statedict.GPT2Conv1D()); err != nil {
		t.Fatal(err)
	}
	w := float64s(t, scopeValues(t, scope).Get("h.0.attn.c_attn.weight"))
	in := g.GPT2["h.0.attn.c_attn.weight"].Values // [4, 6]
	for o := range 6 {
		for i := range 4 {
			if w[o*4+i] != in[i*6+o] {
				t.Fatalf("weight[%d][%d] = %v, the file's [%d][%d] %v", o, i, w[o*4+i], i, o, in[i*6+o])
			}
		}
	}
	back, err := statedict.FromScope(scope, statedict.GPT2Conv1D())
	if err != nil {
		t.Fatal(err)
	}
	checkTensors(t, back, g.GPT2, "")
}

// TestVoltAndGoMLXVariablesAreNotKeys: the optimizer state volt keeps
// under "/volt/" and GoMLX's random state are neither missing keys nor
// saved.
func TestVoltAndGoMLXVariablesAreNotKeys(t *testing.T) {
	scope := model.NewStore().RootScope()
	for _, v := range netVariables() {
		scope.Store().VariableWithValue("/"+v.path, tensors.FromShape(v.shape))
	}
	scope.Store().VariableWithValue("/volt/optimizer_0/fc/weight/exp_avg", tensors.FromShape(shapes.Make(dtypes.Float32, 2, 4)))
	scope.Store().VariableWithValue("/#rngState", tensors.FromShape(shapes.Make(dtypes.Uint64, 3)))
	sd, err := statedict.Read("testdata/net.pt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sd.Load(scope); err != nil {
		t.Fatal(err)
	}
	if keys := scopeValues(t, scope).Keys(); len(keys) != 9 {
		t.Errorf("saved keys %v, want Net's 9", keys)
	}
}

// TestExcludeANewHead: a backbone's classifier left out of the file loads
// the rest into a model with a head of another size, the head keeping its
// values; without Exclude the head's shape mismatch is an error.
func TestExcludeANewHead(t *testing.T) {
	g := readGoldens(t)
	vars := netVariables()
	vars[7].shape, vars[8].shape = shapes.Make(dtypes.Float32, 5, 4), shapes.Make(dtypes.Float32, 5) // fc: 5 classes, not 2
	sd, err := statedict.Read("testdata/net.pt")
	if err != nil {
		t.Fatal(err)
	}
	scope := newScope(t, vars)
	if _, err := sd.Load(scope, statedict.NonStrict()); err == nil || !strings.Contains(err.Error(), `"fc.weight": the file has float32[2, 4], the model float32[5, 4]`) {
		t.Errorf("error %v, want fc.weight's mismatch", err)
	}
	report, err := sd.Load(scope, statedict.NonStrict(), statedict.Exclude("fc."))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(report.Excluded, []string{"fc.weight", "fc.bias"}) || !slices.Equal(report.Missing, []string{"fc.weight", "fc.bias"}) || len(report.Loaded) != 7 {
		t.Errorf("report %s", report)
	}
	got := scopeValues(t, scope)
	if !slices.Equal(float64s(t, got.Get("conv.weight")), g.Net["conv.weight"].Values) || slices.ContainsFunc(float64s(t, got.Get("fc.weight")), func(v float64) bool { return v != 0 }) {
		t.Errorf("conv.weight not loaded or fc.weight changed")
	}
}

// TestExcludeMatching: patterns match whole keys, "*" across dots; a
// malformed pattern panics naming it.
func TestExcludeMatching(t *testing.T) {
	sd, err := statedict.Read("testdata/net.pt")
	if err != nil {
		t.Fatal(err)
	}
	scope := newScope(t, netVariables()[:6]) // conv and bn without num_batches_tracked
	report, err := sd.Load(scope, statedict.ExcludeMatching("*.num_batches_tracked", "fc.*"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(report.Excluded, []string{"bn.num_batches_tracked", "fc.weight", "fc.bias"}) {
		t.Errorf("excluded %v", report.Excluded)
	}
	defer func() {
		if r := fmt.Sprint(recover()); !strings.Contains(r, `statedict.ExcludeMatching("[bad"): syntax error in pattern`) {
			t.Errorf("panic %q", r)
		}
	}()
	statedict.ExcludeMatching("[bad")
}
