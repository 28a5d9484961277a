package volt_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/dtypes/float16"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// dtypeOf returns the dtype of the variable at path.
func dtypeOf(t *testing.T, tr *volt.Trainer, path string) dtypes.DType {
	t.Helper()
	v := tr.Store().GetVariable(path)
	if v == nil {
		t.Fatalf("no variable %s", path)
	}
	return v.DType()
}

func TestPrecisionPolicies(t *testing.T) {
	const w = "/dense/dense/weights"
	tests := []struct {
		precision   string
		compute     dtypes.DType
		master      dtypes.DType // 0: no master copy
		optimizerOn dtypes.DType // dtype of the optimizer's state
	}{
		{"32-true", dtypes.Float32, 0, dtypes.Float32},
		{"64-true", dtypes.Float64, 0, dtypes.Float64},
		{"bf16-true", dtypes.BFloat16, 0, dtypes.BFloat16},
		{"16-true", dtypes.Float16, 0, dtypes.Float16},
		{"bf16-mixed", dtypes.BFloat16, dtypes.Float32, dtypes.Float32},
		{"16-mixed", dtypes.Float16, dtypes.Float32, dtypes.Float32},
	}
	for _, tc := range tests {
		t.Run(tc.precision, func(t *testing.T) {
			tr := fitBoring(t, volt.Config{MaxEpochs: 20, Precision: tc.precision}, boringData(), &adamOnly{})
			if got := dtypeOf(t, tr, w); got != tc.compute {
				t.Errorf("compute weights are %s, want %s", got, tc.compute)
			}
			opt := "/volt/optimizer_0" + w + "/exp_avg"
			if tc.master != 0 {
				if got := dtypeOf(t, tr, "/volt/master"+w); got != tc.master {
					t.Errorf("master weights are %s, want %s", got, tc.master)
				}
				opt = "/volt/optimizer_0/volt/master" + w + "/exp_avg"
				// The compute copy is the master cast down.
				master, _ := tr.Store().GetVariable("/volt/master" + w).Value()
				compute, _ := tr.Store().GetVariable(w).Value()
				m := tensors.MustCopyFlatData[float32](master)
				for i, want := range castDown(m, tc.compute) {
					if got := flatAsFloat32(compute)[i]; got != want {
						t.Errorf("compute copy[%d] = %v, want the master %v cast to %s = %v", i, got, m[i], tc.compute, want)
					}
				}
			}
			if got := dtypeOf(t, tr, opt); got != tc.optimizerOn {
				t.Errorf("optimizer state is %s, want %s", got, tc.optimizerOn)
			}
			if v := tr.CallbackMetrics()["val_loss"]; math.IsNaN(v) || v > 1 {
				t.Errorf("val_loss %v after training in %s", v, tc.precision)
			}
		})
	}
}

// adamOnly is the boring model with Adam, whose state shows where the
// optimizer works.
type adamOnly struct{ boring }

func (adamOnly) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(0.1)) }

// castDown rounds float32 values to dtype and back.
func castDown(values []float32, dtype dtypes.DType) []float32 {
	out := make([]float32, len(values))
	for i, v := range values {
		if dtype == dtypes.BFloat16 {
			out[i] = bfloat16.FromFloat32(v).Float32()
		} else {
			out[i] = float16.FromFloat32(v).Float32()
		}
	}
	return out
}

// flatAsFloat32 reads a bfloat16 or float16 tensor as float32 values.
func flatAsFloat32(t *tensors.Tensor) []float32 {
	var out []float32
	_ = t.ConstFlatData(func(flat any) {
		switch x := flat.(type) {
		case []bfloat16.BFloat16:
			for _, v := range x {
				out = append(out, v.Float32())
			}
		case []float16.Float16:
			for _, v := range x {
				out = append(out, v.Float32())
			}
		}
	})
	return out
}

// bigLabels makes the boring regression's loss large enough that its scaled
// gradients overflow float16 at the initial loss scale of 65536.
func bigLabels() data.Slice {
	ds := regression(64, 1)
	for i := range ds {
		y := ds[i].Labels[0].Value.([]float32)
		ds[i].Labels = []data.Field{{Value: []float32{y[0] * 100}}}
	}
	return ds
}

func TestLossScalerBacksOffAndSkips(t *testing.T) {
	tr := fitBoring(t, volt.Config{MaxSteps: 12, Precision: "16-mixed"}, loaderOf(bigLabels(), 16), &boring{LR: 1e-4})
	scale := tr.LossScale()
	if !(scale < 65536) {
		t.Fatalf("loss scale %v: no back-off happened", scale)
	}
	// Each overflow halves the scale: log2(65536/scale) steps were skipped.
	skipped := math.Log2(65536 / scale)
	if skipped != math.Trunc(skipped) || skipped < 1 || skipped > 12 {
		t.Errorf("scale %v is not 65536 halved a whole number of times within 12 steps", scale)
	}
	if tr.GlobalStep() != 12 {
		t.Errorf("GlobalStep %d: skipped updates still count as optimizer steps", tr.GlobalStep())
	}
	if !strings.Contains(dtypeOf(t, tr, "/dense/dense/weights").String(), "Float16") {
		t.Error("compute copy not float16")
	}
}
