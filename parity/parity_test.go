package parity_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
	"github.com/voltml/volt/parity"
)

func TestReadErrorsNameTheFile(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.safetensors")
	if err := os.WriteFile(bad, []byte("not a safetensors file"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{bad, filepath.Join(t.TempDir(), "missing.safetensors")} {
		if _, err := parity.Read(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("Read(%s) error %v, want one naming the file", path, err)
		}
	}
}

// TestApplyErrors: a model variable without its weight in the file, or
// with another shape, fails Fit naming the variable.
func TestApplyErrors(t *testing.T) {
	file, err := parity.Read(filepath.Join("testdata", "mlp_adam.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	examples, err := file.Examples([]string{"x"}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(byName map[string]*tensors.Tensor)
		want string
	}{
		{"missing weight", func(m map[string]*tensors.Tensor) { delete(m, "params/mlp/layer_1/dense/biases") },
			`variable /mlp/layer_1/dense/biases has no initial weight "params/mlp/layer_1/dense/biases"`},
		{"other shape", func(m map[string]*tensors.Tensor) {
			m["params/mlp/layer_2/dense/weights"] = tensors.FromFlatDataAndDimensions(make([]float32, 64), 1, 64)
		}, "variable /mlp/layer_2/dense/weights is shaped [64 1], its weight in"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			edited := &parity.Tensors{Path: file.Path, ByName: map[string]*tensors.Tensor{}}
			for k, v := range file.ByName {
				edited.ByName[k] = v
			}
			tc.edit(edited.ByName)
			tr, err := volt.NewTrainer(volt.Config{MaxSteps: 1, DisableLoggers: true, DisableModelSummary: true, Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			m := &mlp{weights: edited, optimizers: volt.Optimize(optim.Adam(1e-3))}
			err = tr.Fit(t.Context(), m, volt.Loaders{Train: &data.DataLoader{Dataset: examples, BatchSize: 16}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Fit error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	bad, maxRel, err := parity.Compare([]float64{1, 2.0001, 3}, []float64{1, 2, 3.01}, 1e-3)
	if err != nil || len(bad) != 1 || bad[0].Step != 2 || maxRel < 3.3e-3 {
		t.Errorf("Compare: %v, max %v, %v; want step 2 only", bad, maxRel, err)
	}
	if _, _, err := parity.Compare([]float64{1}, []float64{1, 2}, 1e-3); err == nil {
		t.Error("Compare of different lengths: no error")
	}
}

// TestWriteReadRoundTrip: Write then Read gives back every tensor.
func TestWriteReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "round.safetensors")
	in := map[string]*tensors.Tensor{
		"f32": tensors.FromFlatDataAndDimensions([]float32{1.5, -2, 3.25, 0}, 2, 2),
		"f64": tensors.FromFlatDataAndDimensions([]float64{1e-300, -7}, 2),
		"i32": tensors.FromFlatDataAndDimensions([]int32{-1, 2, 3}, 3, 1),
		"i64": tensors.FromFlatDataAndDimensions([]int64{1 << 40}, 1),
	}
	if err := parity.Write(path, in); err != nil {
		t.Fatal(err)
	}
	if err := parity.Write(path, in); err == nil {
		t.Error("Write over an existing file: no error")
	}
	out, err := parity.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range in {
		got, ok := out.ByName[name]
		if !ok || !got.Shape().Equal(want.Shape()) || fmt.Sprint(got.Value()) != fmt.Sprint(want.Value()) {
			t.Errorf("%s: read back %v, wrote %v", name, got, want)
		}
	}
}
