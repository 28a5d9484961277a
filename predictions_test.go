package volt_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/dtypes/float16"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
)

// TestPredictionRows: batches of every dtype a PredictStep can return are
// joined along the batch axis and read as float32; mismatched or scalar
// batches are refused, naming the batch.
func TestPredictionRows(t *testing.T) {
	bf := func(v ...float32) []bfloat16.BFloat16 {
		out := make([]bfloat16.BFloat16, len(v))
		for i, x := range v {
			out[i] = bfloat16.FromFloat32(x)
		}
		return out
	}
	f16 := func(v ...float32) []float16.Float16 {
		out := make([]float16.Float16, len(v))
		for i, x := range v {
			out[i] = float16.FromFloat32(x)
		}
		return out
	}
	of := tensors.FromFlatDataAndDimensions[float32]
	tests := []struct {
		name    string
		batches []*tensors.Tensor
		want    [][]float32
		shape   []int
		wantErr string
	}{
		{"float32 [batch, 2], batches of 2 and 1",
			[]*tensors.Tensor{of([]float32{1, 2, 3, 4}, 2, 2), of([]float32{5, 6}, 1, 2)},
			[][]float32{{1, 2}, {3, 4}, {5, 6}}, []int{3, 2}, ""},
		{"bfloat16 (bf16-mixed)", []*tensors.Tensor{tensors.FromFlatDataAndDimensions(bf(0.5, -2, 3), 3)},
			[][]float32{{0.5}, {-2}, {3}}, []int{3}, ""},
		{"float16 (16-mixed)", []*tensors.Tensor{tensors.FromFlatDataAndDimensions(f16(0.25, 8), 2, 1)},
			[][]float32{{0.25}, {8}}, []int{2, 1}, ""},
		{"float64 (64-true)", []*tensors.Tensor{tensors.FromFlatDataAndDimensions([]float64{1.5, 2.5}, 1, 2)},
			[][]float32{{1.5, 2.5}}, []int{1, 2}, ""},
		{"int32 classes", []*tensors.Tensor{tensors.FromFlatDataAndDimensions([]int32{7, 1}, 2)},
			[][]float32{{7}, {1}}, []int{2}, ""},
		{"bool", []*tensors.Tensor{tensors.FromFlatDataAndDimensions([]bool{true, false}, 2)},
			[][]float32{{1}, {0}}, []int{2}, ""},
		{"rank 3 rows are flattened", []*tensors.Tensor{of([]float32{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 2)},
			[][]float32{{1, 2, 3, 4}, {5, 6, 7, 8}}, []int{2, 2, 2}, ""},
		{"no batches", nil, nil, nil, "no batches"},
		{"scalar", []*tensors.Tensor{tensors.FromValue(float32(1))}, nil, nil, "batch 0: the prediction is a scalar"},
		{"mismatched widths", []*tensors.Tensor{of([]float32{1, 2}, 1, 2), of([]float32{1, 2, 3}, 1, 3)},
			nil, nil, "batch 1 has shape [1 3], batch 0 [1 2]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := volt.PredictionRows(tc.batches)
			_, shape, _ := volt.PredictionValues(tc.batches)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rows, tc.want) || !reflect.DeepEqual(shape, tc.shape) {
				t.Errorf("rows %v shape %v, want %v and %v", rows, shape, tc.want, tc.shape)
			}
		})
	}
}

// TestPredictionRowsUnderMixedPrecision: Predict under "bf16-mixed" returns
// bfloat16 tensors, which PredictionRows reads; they agree with the same
// module's float32 predictions to bfloat16's precision.
func TestPredictionRowsUnderMixedPrecision(t *testing.T) {
	rowsOf := func(precision string, want dtypes.DType) [][]float32 {
		t.Helper()
		tr, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 1, Precision: precision}))
		if err != nil {
			t.Fatal(err)
		}
		m := &exRegressor{Hidden: 8, LR: 0.02}
		if err := tr.Fit(t.Context(), m, exData()); err != nil {
			t.Fatal(err)
		}
		preds, err := tr.Predict(t.Context(), m, exData())
		if err != nil {
			t.Fatal(err)
		}
		if got := preds[0][0].DType(); got != want {
			t.Fatalf("%s: predictions of dtype %s, want %s", precision, got, want)
		}
		rows, err := volt.PredictionRows(preds[0])
		if err != nil {
			t.Fatalf("%s (dtype %s): %v", precision, preds[0][0].DType(), err)
		}
		return rows
	}
	low, full := rowsOf("bf16-mixed", dtypes.BFloat16), rowsOf("32-true", dtypes.Float32)
	if len(low) != 16 || len(full) != 16 {
		t.Fatalf("got %d and %d rows, want 16 (the predict loader's examples)", len(low), len(full))
	}
	for i := range low {
		if d := low[i][0] - full[i][0]; d > 0.1 || d < -0.1 {
			t.Errorf("row %d: bf16-mixed %v, 32-true %v", i, low[i], full[i])
		}
	}
}
