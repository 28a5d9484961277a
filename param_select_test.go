package volt_test

import (
	"math"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
)

// TestSelects: scope paths select a subtree at "/" boundaries; PyTorch
// names select by the variable's key or one of its module prefixes, as
// torch's named_parameters() names them, with path.Match patterns.
func TestSelects(t *testing.T) {
	tests := []struct {
		selector, path string
		want           bool
	}{
		{"/backbone", "/backbone/dense/weights", true},
		{"/backbone", "/backbone", true},
		{"/backbone/", "/backbone/dense/weights", true},
		{"/backbone", "/backbone2/dense/weights", false},
		{"/layer1/0", "/layer1/0/conv1/weight", true},
		{"layer4", "/layer4/0/conv1/weight", true},
		{"layer4", "/layer40/conv1/weight", false},
		{"layer4.0.conv1", "/layer4/0/conv1/weight", true},
		{"layer4.0.conv1.weight", "/layer4/0/conv1/weight", true},
		{"layer4.0.conv1.weight", "/layer4/0/conv1/weights", false},
		{"conv1", "/layer1/0/conv1/weight", false}, // names start at the root, as torch's
		{"conv1", "/conv1/weight", true},
		{"layer*", "/layer3/1/bn2/bias", true},
		{"layer*", "/fc/weight", false},
		{"*.bias", "/layer3/1/bn2/bias", true},
		{"*.bias", "/layer3/1/bn2/weight", false},
		{"layer[12]", "/layer2/0/conv1/weight", true},
		{"layer[12]", "/layer3/0/conv1/weight", false},
		{"*.downsample.*", "/layer2/0/downsample/1/weight", true},
		{"transformer.h.0", "/transformer/h/0/attn/c_attn/weight", true},
	}
	for _, tc := range tests {
		if got := volt.Selects(tc.selector, tc.path); got != tc.want {
			t.Errorf("Selects(%q, %q) = %v, want %v", tc.selector, tc.path, got, tc.want)
		}
	}
}

// TestCheckSelector names what is wrong with a selector.
func TestCheckSelector(t *testing.T) {
	tests := []struct{ selector, want string }{
		{"/backbone", ""},
		{"layer4.0", ""},
		{"layer*", ""},
		{"", "empty"},
		{"backbone/dense", `"backbone/dense" is neither a scope path (which starts with "/") nor a PyTorch name`},
		{"layer[", `"layer[" is not a valid name pattern`},
	}
	for _, tc := range tests {
		err := volt.CheckSelector(tc.selector)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckSelector(%q): %v", tc.selector, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckSelector(%q) = %v, want an error containing %q", tc.selector, err, tc.want)
		}
	}
}

// TestParamGroupByTorchNameAndLR: groups selected by PyTorch names, with
// PyTorch's absolute "lr" (LR), update as the scale-and-scope groups of
// TestParamGroupWeightDecayByNameAndScope do, and LR becomes LRScale.
func TestParamGroupByTorchNameAndLR(t *testing.T) {
	const lr, wd, steps = 0.1, 0.5, 4
	m := &zeroGradHeads{opt: optim.SGD(lr).WithWeightDecay(wd), groups: []volt.ParamGroup{
		{Params: []string{"*.biases"}, LRScale: 1, WeightDecay: volt.Decay(0)},
		{Params: []string{"b"}, LR: 3 * lr, WeightDecay: volt.Decay(0.25)},
	}}
	init := &initialWeights{t: t}
	tr := fitBoring(t, volt.Config{MaxEpochs: 1, Precision: "64-true", Callbacks: []volt.Callback{init}}, loaderOf(regression(16, 1), 4), m)
	if g := tr.Optimizers()[0].Groups[1]; g.LR != 0 || math.Abs(g.LRScale-3) > 1e-15 {
		t.Errorf("group 1 has LR %v and LRScale %v, want LR turned into LRScale 3", g.LR, g.LRScale)
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
			if want := before[i] * f; math.Abs(after[i]-want) > 1e-14*math.Abs(want) {
				t.Errorf("%s[%d] = %.17g, want %.17g (initial × %.6g)", path, i, after[i], want, f)
			}
		}
	}
}
