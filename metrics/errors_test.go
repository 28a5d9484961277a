package metrics

import (
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// TestConstructorErrors checks that bad configurations are errors naming the
// field and what is valid.
func TestConstructorErrors(t *testing.T) {
	tests := []struct {
		name string
		err  func() error
		want string // a substring of the error
	}{
		{"zero task", func() error { _, err := NewAccuracy(Task{}, Macro); return err }, "Task.Kind"},
		{"one class", func() error { _, err := NewF1(Multiclass(1), Macro); return err }, "Task.NumClasses = 1"},
		{"threshold above 1", func() error { _, err := NewPrecision(Binary().WithThreshold(2), Macro); return err }, "Task.Threshold = 2"},
		{"top-k above classes", func() error { _, err := NewRecall(Multiclass(4).WithTopK(5), Macro); return err }, "Task.TopK = 5"},
		{"top-k for binary", func() error { _, err := NewRecall(Binary().WithTopK(2), Macro); return err }, "top-k is for multiclass"},
		{"unknown average", func() error { _, err := NewSpecificity(Multiclass(3), Average(9)); return err }, "Average = 9"},
		{"beta zero", func() error { _, err := NewFBeta(Binary(), 0, Macro); return err }, "beta = 0"},
		{"one threshold", func() error { _, err := NewROC(Binary(), []float64{0.5}); return err }, "1 thresholds"},
		{"threshold outside [0, 1]", func() error { _, err := NewROC(Binary(), []float64{0, 2}); return err }, "thresholds[1] = 2"},
		{"micro multiclass AUROC", func() error { _, err := NewAUROC(Multiclass(3), Micro, nil); return err }, "Micro"},
		{"top-k confusion matrix", func() error { _, err := NewConfusionMatrix(Multiclass(3).WithTopK(2), NoNormalize); return err }, "TopK = 2"},
		{"unknown normalize", func() error { _, err := NewConfusionMatrix(Binary(), Normalize(7)); return err }, "normalize = 7"},
		{"multiclass max_fpr", func() error { _, err := NewPartialAUROC(Multiclass(3), 0.5, nil); return err }, "want binary"},
		{"max_fpr zero", func() error { _, err := NewPartialAUROC(Binary(), 0, nil); return err }, "maxFPR = 0"},
		{"zero bins", func() error { _, err := NewCalibrationError(Binary(), 0, NormL1); return err }, "bins = 0"},
		{"multilabel calibration", func() error { _, err := NewCalibrationError(Multilabel(3), 10, NormL1); return err }, "multilabel"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// specsOnly is an Updater with the given states and no update.
type specsOnly []StateSpec

func (s specsOnly) States() []StateSpec { return s }

func (s specsOnly) Update(state []*graph.Node, _, _ *graph.Node) []*graph.Node { return state }

// TestStateErrors checks the host state's validation.
func TestStateErrors(t *testing.T) {
	sum := StateSpec{Name: "s", DType: dtypes.Float64, Reduce: ReduceSum}
	tests := []struct {
		name  string
		specs specsOnly
		want  string
	}{
		{"no name", specsOnly{{DType: dtypes.Float64, Reduce: ReduceSum}}, "Name is empty"},
		{"float32", specsOnly{{Name: "x", DType: dtypes.Float32, Reduce: ReduceSum}}, "want Int64 or Float64"},
		{"zero dim", specsOnly{{Name: "x", DType: dtypes.Int64, Dims: []int{0}, Reduce: ReduceSum}}, "positive dimensions"},
		{"no reduction", specsOnly{{Name: "x", DType: dtypes.Int64}}, "want ReduceSum"},
		{"repeated name", specsOnly{sum, sum}, "used twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewState(tc.specs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}

	s, err := NewState(MeanSquaredError{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Restore(map[string]*tensors.Tensor{"sum_squared_error": tensors.FromScalar(1.0), "count": tensors.FromScalar(int64(1))}); err == nil || !strings.Contains(err.Error(), `"total" is missing`) {
		t.Errorf("Restore without total: %v", err)
	}
	if err := s.Set(1, tensors.FromScalar(1.0)); err == nil || !strings.Contains(err.Error(), "dtype Float64, want Int64") {
		t.Errorf("Set with the wrong dtype: %v", err)
	}
	other, err := NewState(MeanAbsoluteError{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Merge(other); err == nil || !strings.Contains(err.Error(), "different metrics") {
		t.Errorf("Merge of MSE and MAE states: %v", err)
	}
	r2, err := NewState(R2Score{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (R2Score{}).Compute(r2.Tensors()); err == nil || !strings.Contains(err.Error(), "at least two samples") {
		t.Errorf("R2Score of no samples: %v", err)
	}
	if _, err := vector([]float64{1, 2}).Scalar(); err == nil {
		t.Error("Scalar of a vector value: no error")
	}
}
