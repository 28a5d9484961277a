package nn_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/nn"
)

// TestGRUOutputs: nn.GRU's outputs are [batch, time, hidden], the last one
// is the last step's, and its variables have PyTorch's names and shapes
// (package parity's TestGRUParity checks the values against PyTorch's).
func TestGRUOutputs(t *testing.T) {
	const batch, steps, features, hidden = 3, 4, 5, 64
	store := model.NewStore()
	exec, err := model.NewExec(backend(t), store, func(scope *model.Scope, x *graph.Node) []*graph.Node {
		outputs, last := nn.GRU(scope.In("gru"), x, hidden)
		return []*graph.Node{outputs, last}
	})
	if err != nil {
		t.Fatal(err)
	}
	xs := make([]float32, batch*steps*features)
	for i := range xs {
		xs[i] = float32(math.Sin(float64(i)))
	}
	outs, err := exec.Call(tensors.FromFlatDataAndDimensions(xs, batch, steps, features))
	if err != nil {
		t.Fatal(err)
	}
	for name, dims := range map[string][]int{"weight_ih": {3 * hidden, features}, "weight_hh": {3 * hidden, hidden},
		"bias_ih": {3 * hidden}, "bias_hh": {3 * hidden}} {
		if v := store.GetVariable("/gru/" + name); v == nil || fmt.Sprint(v.Shape().Dimensions) != fmt.Sprint(dims) {
			t.Errorf("variable %s is %v, want PyTorch's shape %v", name, v, dims)
		}
	}
	if got := outs[0].Shape().Dimensions; fmt.Sprint(got) != fmt.Sprint([]int{batch, steps, hidden}) {
		t.Fatalf("outputs %v, want [%d %d %d]", got, batch, steps, hidden)
	}
	all, last := tensors.MustCopyFlatData[float32](outs[0]), tensors.MustCopyFlatData[float32](outs[1])
	for b := range batch {
		for j := range hidden {
			if a, l := all[(b*steps+steps-1)*hidden+j], last[b*hidden+j]; a != l {
				t.Fatalf("last[%d][%d] = %v, the last step's output %v", b, j, l, a)
			}
		}
	}
}
