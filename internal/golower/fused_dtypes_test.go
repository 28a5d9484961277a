package golower

import (
	"math"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/nn"
)

// TestFusedOpsRunInEveryFloatDType: softmax and layer normalization, which
// GoMLX fuses where the backend has the fused op, run on the wrapper in
// bfloat16 and float16 (the Go backend's fused ones fail when the graph
// runs: "FusedSoftmax: dtype BFloat16: op not implemented") and give the
// float64 values to the dtype's precision.
func TestFusedOpsRunInEveryFloatDType(t *testing.T) {
	backend := Wrap(gobackend.GetBackend())
	x := [][]float64{{0.5, -1, 2, 0.25}, {3, 1, -2, 0}}
	ops := map[string]func(*Node) *Node{
		"Softmax":   func(x *Node) *Node { return Softmax(x, -1) },
		"LayerNorm": func(x *Node) *Node { return nn.LayerNorm(x, []int{-1}, 1e-5, nil, nil, nil) },
	}
	for name, op := range ops {
		want := MustExecOnce(backend, op, tensors.FromValue(x)).Value().([][]float64)
		for _, tc := range []struct {
			dtype dtypes.DType
			tol   float64
		}{{dtypes.Float32, 1e-6}, {dtypes.BFloat16, 0.05}, {dtypes.Float16, 0.01}} {
			exec, err := NewExec(backend, func(x *Node) *Node {
				return ConvertDType(op(ConvertDType(x, tc.dtype)), dtypes.Float64)
			})
			if err != nil {
				t.Fatal(err)
			}
			out, err := exec.Call(tensors.FromValue(x))
			exec.Finalize()
			if err != nil {
				t.Errorf("%s in %s: %v", name, tc.dtype, err)
				continue
			}
			got := out[0].Value().([][]float64)
			for i := range want {
				for j := range want[i] {
					if d := math.Abs(got[i][j] - want[i][j]); d > tc.tol*max(1, math.Abs(want[i][j])) {
						t.Errorf("%s in %s [%d][%d] = %v, float64 gives %v", name, tc.dtype, i, j, got[i][j], want[i][j])
					}
				}
			}
		}
	}
}
