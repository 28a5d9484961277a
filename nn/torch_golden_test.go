package nn_test

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
)

// torchTensor is a tensor in a torch-written golden file: its shape,
// torch's dtype name and its values, row-major, as float64.
type torchTensor struct {
	Shape  []int     `json:"shape"`
	DType  string    `json:"dtype"`
	Values []float64 `json:"values"`
}

// tensor returns t as a GoMLX tensor: int64 for torch's integer dtypes,
// float32 otherwise.
func (t torchTensor) tensor() *tensors.Tensor {
	switch t.DType {
	case "int64", "int32":
		v := make([]int64, len(t.Values))
		for i, x := range t.Values {
			v[i] = int64(x)
		}
		if len(t.Shape) == 0 {
			return tensors.FromScalar(v[0])
		}
		return tensors.FromFlatDataAndDimensions(v, t.Shape...)
	}
	v := make([]float32, len(t.Values))
	for i, x := range t.Values {
		v[i] = float32(x)
	}
	if len(t.Shape) == 0 {
		return tensors.FromScalar(v[0])
	}
	return tensors.FromFlatDataAndDimensions(v, t.Shape...)
}

// readJSON decodes the golden file at path into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// maxDiff returns the largest |got − want| over float32 tensor got, and
// fails t when the shapes differ or a value is off by more than tol·max(1, |want|).
func maxDiff(t *testing.T, what string, got *tensors.Tensor, want torchTensor, tol float64) float64 {
	t.Helper()
	if got.Shape().Size() != len(want.Values) || (got.Rank() != len(want.Shape)) {
		t.Errorf("%s: shape %s, torch's %v", what, got.Shape(), want.Shape)
		return math.Inf(1)
	}
	values := tensors.MustCopyFlatData[float32](got)
	worst := 0.0
	for i, w := range want.Values {
		d := math.Abs(float64(values[i]) - w)
		if math.IsNaN(d) && !(math.IsNaN(w) && math.IsNaN(float64(values[i]))) {
			d = math.Inf(1)
		} else if math.IsNaN(d) {
			d = 0
		}
		worst = math.Max(worst, d)
		if d > tol*math.Max(1, math.Abs(w)) {
			t.Errorf("%s[%d] = %v, torch %v (diff %.3g)", what, i, values[i], w, d)
		}
	}
	return worst
}
