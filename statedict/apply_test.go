package statedict_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	_ "github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/statedict"
)

// linear is torch.nn.Linear in scope, created the way a layer creates its
// variables during a trace (no values yet).
func linear(scope *model.Scope, x *graph.Node, in, out int) *graph.Node {
	w := scope.VariableWithShape("weight", shapes.Make(dtypes.Float32, out, in)).NodeValue(x.Graph())
	b := scope.VariableWithShape("bias", shapes.Make(dtypes.Float32, out)).NodeValue(x.Graph())
	return graph.Add(graph.DotGeneral(x, []int{1}, nil, w, []int{1}, nil), graph.ExpandAxes(b, 0))
}

// TestApplyDuringTheTrace: a deferred Apply gives the layers' new
// variables torch's values before their first use, so fc's output is
// x·Wᵀ + b with Net's weights; a layer the file lacks fails the trace
// with the *LoadError.
func TestApplyDuringTheTrace(t *testing.T) {
	g := readGoldens(t)
	sd, err := statedict.Read("testdata/net.pt")
	if err != nil {
		t.Fatal(err)
	}
	be, err := compute.NewWithConfig("go")
	if err != nil {
		t.Fatal(err)
	}
	x := [][]float32{{1, -2, 0.5, 3}, {0, 1, -1, 2}}
	var reports []*statedict.Report
	build := func(extra bool) func(*model.Scope, *graph.Node) *graph.Node {
		return func(scope *model.Scope, x *graph.Node) *graph.Node {
			scope = scope.In("net")
			defer sd.Apply(scope, statedict.NonStrict(), statedict.OnReport(func(r *statedict.Report) { reports = append(reports, r) })) // conv and bn are not built here
			y := linear(scope.In("fc"), x, 4, 2)
			if extra {
				y = linear(scope.In("head"), y, 2, 2)
			}
			return y
		}
	}
	exec, err := model.NewExec1(be, model.NewStore(), build(false))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Call(x)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.Call(x); err != nil { // a second call: variables have values, nothing to load or report
		t.Fatal(err)
	}
	if len(reports) != 1 || len(reports[0].Loaded) != 2 || len(reports[0].Unexpected) != 7 {
		t.Errorf("reports %v, want one: fc loaded, conv and bn unexpected", reports)
	}
	got := tensors.MustCopyFlatData[float32](out)
	w, b := g.Net["fc.weight"].Values, g.Net["fc.bias"].Values
	for i := range 2 {
		for o := range 2 {
			want := b[o]
			for k := range 4 {
				want += float64(x[i][k]) * w[o*4+k]
			}
			if math.Abs(float64(got[i*2+o])-want) > 1e-6 {
				t.Errorf("y[%d][%d] = %v, want %v", i, o, got[i*2+o], want)
			}
		}
	}

	strict, err := model.NewExec1(be, model.NewStore(), func(scope *model.Scope, x *graph.Node) *graph.Node {
		scope = scope.In("net")
		defer sd.Apply(scope)
		return linear(scope.In("head"), x, 4, 2)
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = strict.Call(x)
	if err == nil || !strings.Contains(err.Error(), "missing keys, in the model and not in the file (2): head.weight, head.bias") {
		t.Errorf("error %v, want the LoadError naming head.weight and head.bias", err)
	}
}

// TestApplyPassesOnTheLayersPanic: when a layer panics, a deferred Apply
// passes that panic on rather than reporting the keys of the layers never
// built as unexpected.
func TestApplyPassesOnTheLayersPanic(t *testing.T) {
	sd, err := statedict.Read("testdata/net.pt")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		r := recover()
		if err, ok := r.(error); ok || r == nil || !strings.Contains(fmt.Sprint(r), "the layer's own failure") {
			t.Errorf("panic %v (error %v), want the layer's", r, err)
		}
	}()
	scope := model.NewStore().RootScope()
	func() {
		defer sd.Apply(scope)
		scope.In("conv").VariableWithShape("weight", shapes.Make(dtypes.Float32, 3, 2, 3, 3)) // built before the failure
		panic("the layer's own failure")
	}()
}
