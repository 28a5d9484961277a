package optim

import (
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// TestApplyMixedDTypes checks that one optimizer updates float32 and float64
// parameters together (they share one learning-rate variable), each in its
// own dtype.
func TestApplyMixedDTypes(t *testing.T) {
	tests := []struct {
		name  string
		first dtypes.DType // dtype of the first parameter, which fixes the LR variable's
	}{
		{"float32 first", dtypes.Float32},
		{"float64 first", dtypes.Float64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := model.NewStore()
			f32 := tensors.FromFlatDataAndDimensions([]float32{1, 2}, 2)
			f64 := tensors.FromFlatDataAndDimensions([]float64{3, 4}, 2)
			values := []*tensors.Tensor{f32, f64}
			wantDTypes := []dtypes.DType{dtypes.Float32, dtypes.Float64}
			if tc.first == dtypes.Float64 {
				values = []*tensors.Tensor{f64, f32}
				wantDTypes = []dtypes.DType{dtypes.Float64, dtypes.Float32}
			}
			var params []*model.Variable
			for i, v := range values {
				p, err := store.CreateVariable([]string{"/a", "/b"}[i], v)
				if err != nil {
					t.Fatal(err)
				}
				params = append(params, p)
			}
			exec, err := model.NewExec(testBackend(t), store, func(_ *model.Scope, g *graph.Graph) *graph.Node {
				store.SetTraining(g, true) // else the Go backend embeds the parameters as constants
				grads := make([]*graph.Node, len(params))
				for i, p := range params {
					grads[i] = graph.OnesLike(p.NodeValue(g))
				}
				SGD(0.5).Apply(store, 0, params, grads, nil)
				return graph.ScalarZero(g, dtypes.Float32)
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := exec.Call(); err != nil {
				t.Fatalf("step: %v", err)
			}
			if lr := store.GetVariable(StatePrefix(0) + "/lr"); lr == nil || lr.DType() != dtypes.Float64 {
				t.Errorf("LR variable = %v, want a float64 variable (a float64 parameter is present)", lr)
			}
			for i, p := range params {
				v, err := p.Value()
				if err != nil {
					t.Fatal(err)
				}
				if v.DType() != wantDTypes[i] {
					t.Fatalf("param %d dtype = %s, want %s", i, v.DType(), wantDTypes[i])
				}
				var got []float64
				switch v.DType() {
				case dtypes.Float32:
					for _, x := range tensors.MustCopyFlatData[float32](v) {
						got = append(got, float64(x))
					}
				default:
					got = tensors.MustCopyFlatData[float64](v)
				}
				want := []float64{0.5, 1.5}
				if v.DType() == dtypes.Float64 {
					want = []float64{2.5, 3.5}
				}
				checkClose(t, p.Path(), got, want, 0)
			}
		})
	}
}
