package digits_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/examples/internal/digits"
	"github.com/voltml/volt/internal/onnxcheck"
	"github.com/voltml/volt/internal/testutil"
)

// mlpLogits is digits.MLP (the same variables) with a PredictStep that
// returns the class scores, so that the exported model's numbers are
// compared, not only their argmax.
type mlpLogits struct {
	Hidden []int
	LR     float64
}

func (m *mlpLogits) mlp() *digits.MLP { return &digits.MLP{Hidden: m.Hidden, LR: m.LR} }

// TrainingStep implements volt.Module.
func (m *mlpLogits) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.mlp().TrainingStep(s, b)
}

// PredictStep implements volt.PredictStepper: the logits.
func (m *mlpLogits) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.mlp().Logits(s, b.Input(0))
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *mlpLogits) ConfigureOptimizers() volt.Optimizers { return m.mlp().ConfigureOptimizers() }

// HParams implements volt.HParamser.
func (m *mlpLogits) HParams() map[string]any { return m.mlp().HParams() }

// cnnLogits is digits.CNN with a PredictStep that returns the logits.
type cnnLogits struct{ LR float64 }

func (m *cnnLogits) cnn() *digits.CNN { return &digits.CNN{LR: m.LR} }

// TrainingStep implements volt.Module.
func (m *cnnLogits) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.cnn().TrainingStep(s, b)
}

// PredictStep implements volt.PredictStepper: the logits.
func (m *cnnLogits) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.cnn().Logits(s, b.Input(0))
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *cnnLogits) ConfigureOptimizers() volt.Optimizers { return m.cnn().ConfigureOptimizers() }

// images returns n random 784-pixel images in [0, 1) and digit labels.
func images(n int, seed uint64) ([][]float32, []int32) {
	r := rand.New(rand.NewPCG(seed, 1))
	xs := make([][]float32, n)
	ys := make([]int32, n)
	for i := range xs {
		xs[i] = make([]float32, 784)
		for j := range xs[i] {
			xs[i][j] = r.Float32()
		}
		ys[i] = int32(r.IntN(10))
	}
	return xs, ys
}

func rowLoaders(t testing.TB, xs [][]float32, ys []int32, batch int) volt.Loaders {
	t.Helper()
	rows, err := data.Rows(xs, ys)
	if err != nil {
		t.Fatal(err)
	}
	return volt.Loaders{Train: &data.DataLoader{Dataset: rows, BatchSize: batch, Shuffle: true},
		Predict: []data.Loader{&data.DataLoader{Dataset: rows, BatchSize: batch}}}
}

// exportTo exports m's PredictStep with the checkpoint's weights to a file
// and returns its path, bytes and description.
func exportTo(t *testing.T, ckpt string, m volt.Module, file, output string) (string, []byte, *volt.ONNXExport) {
	t.Helper()
	var buf bytes.Buffer
	info, err := volt.ExportONNX(&buf, ckpt, m, []volt.InputSpec{{DType: dtypes.Float32, Dims: []int{784}}},
		volt.ONNXInputNames("images"), volt.ONNXOutputName(output))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), file)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, buf.Bytes(), info
}

// checkReport checks what python3-onnx reads of an exported model: opset
// 13, the named input [batch, 784] float32 and the named output.
func checkReport(t *testing.T, r onnxcheck.Report, output string, outDims []any, elemType int) {
	t.Helper()
	if r.Opsets["ai.onnx"] != volt.ONNXOpset || r.IRVersion != 7 {
		t.Errorf("opsets %v, IR version %d; want ai.onnx %d, IR 7", r.Opsets, r.IRVersion, volt.ONNXOpset)
	}
	wantIn := onnxcheck.Value{Name: "images", ElemType: 1, Dims: []any{"batch", 784.0}}
	if len(r.Inputs) != 1 || fmt.Sprint(r.Inputs[0]) != fmt.Sprint(wantIn) {
		t.Errorf("inputs %v, want [%v]", r.Inputs, wantIn)
	}
	wantOut := onnxcheck.Value{Name: output, ElemType: elemType, Dims: outDims}
	if len(r.Outputs) != 1 || fmt.Sprint(r.Outputs[0]) != fmt.Sprint(wantOut) {
		t.Errorf("outputs %v, want [%v]", r.Outputs, wantOut)
	}
}

// TestExportONNXDigits exports the examples' MLP and CNN, trained for an
// epoch on random images, twice each: the example's own PredictStep (the
// predicted digit, ONNX ArgMax) and the same variables' logits. python3-onnx's
// checker accepts all four (opset 13, input "images" [batch, 784]); the
// logits models run in the independent runtimes (gonnx for the MLP:
// it has no MaxPool; onnx-go's Gorgonia backend for both) at a batch size
// other than the traced one, within 1e-5 of Trainer.Predict, and their
// argmax is the example module's Trainer.Predict. Neither runtime has
// ArgMax, so the class models are checked by the checker only.
func TestExportONNXDigits(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: trains and exports the MNIST models")
	}
	const n, batch = 24, 8
	xs, ys := images(n, 7)
	for _, tc := range []struct {
		name   string
		logits volt.Module
		fresh  func() (logits, class volt.Module)
		gonnx  bool
		ops    []string
	}{
		{"mlp", &mlpLogits{Hidden: []int{256, 256}, LR: 1e-3},
			func() (volt.Module, volt.Module) { return &mlpLogits{}, &digits.MLP{} }, true,
			[]string{"Add", "MatMul", "Relu"}},
		{"cnn", &cnnLogits{LR: 1e-3},
			func() (volt.Module, volt.Module) { return &cnnLogits{}, &digits.CNN{} }, false,
			[]string{"Add", "Conv", "MatMul", "MaxPool", "Relu", "Reshape", "Transpose"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := testutil.Fit(t, testutil.Quiet(volt.Config{MaxEpochs: 1, DisableCheckpointing: true}), tc.logits, rowLoaders(t, xs, ys, batch))
			ckpt := filepath.Join(t.TempDir(), tc.name+".ckpt")
			if err := tr.SaveCheckpoint(ckpt, true); err != nil {
				t.Fatal(err)
			}
			logitsModule, classModule := tc.fresh()
			logitsPath, logitsBytes, info := exportTo(t, ckpt, logitsModule, tc.name+"_logits.onnx", "logits")
			if !info.DynamicBatch {
				t.Errorf("the batch axis is fixed: %s", info.FixedReason)
			}
			r := onnxcheck.Check(t, logitsPath)
			checkReport(t, r, "logits", []any{"batch", 10.0}, 1)
			if !slices.Equal(r.Ops, tc.ops) {
				t.Errorf("ONNX ops %v, want %v", r.Ops, tc.ops)
			}
			classPath, _, _ := exportTo(t, ckpt, classModule, tc.name+"_class.onnx", "digit")
			rc := onnxcheck.Check(t, classPath)
			checkReport(t, rc, "digit", []any{"batch"}, 6)
			if !slices.Contains(rc.Ops, "ArgMax") {
				t.Errorf("class model ops %v: no ArgMax", rc.Ops)
			}

			wantLogits := predict(t, ckpt, logitsModule, rowLoaders(t, xs, ys, batch))
			wantClass := predict(t, ckpt, classModule, rowLoaders(t, xs, ys, batch))
			for i := range wantLogits {
				flat := slices.Concat(xs[i*batch : (i+1)*batch]...)
				want := tensors.MustCopyFlatData[float32](wantLogits[i])
				classes := tensors.MustCopyFlatData[int32](wantClass[i])
				runtimes := map[string]func() ([]float32, error){
					"gorgonnx": func() ([]float32, error) {
						got, dims, err := onnxcheck.Gorgonnx(t, logitsPath, flat, []int{batch, 784})
						if err == nil && !slices.Equal(dims, []int{batch, 10}) {
							err = fmt.Errorf("output shape %v, want [%d 10]", dims, batch)
						}
						return got, err
					},
				}
				if tc.gonnx {
					runtimes["gonnx"] = func() ([]float32, error) {
						return onnxcheck.Gonnx(t, logitsBytes, "images", flat, []int{batch, 784}, "logits")
					}
				}
				for name, run := range runtimes {
					got, err := run()
					if err != nil {
						t.Fatalf("batch %d: %s: %v", i, name, err)
					}
					if worst := maxDiff(got, want); worst > 1e-5 {
						t.Errorf("batch %d: %s's logits differ from Trainer.Predict's by up to %g (> 1e-5)", i, name, worst)
					} else {
						t.Logf("batch %d: %s: max |diff| %.3g", i, name, worst)
					}
					if am := argmax(got, 10); !slices.Equal(am, classes) {
						t.Errorf("batch %d: %s's argmax %v, the example's Trainer.Predict %v", i, name, am, classes)
					}
				}
			}
		})
	}
}

// predict runs Trainer.Predict on m (its hyper-parameters already set by
// the export) with the weights of ckpt, in a fresh trainer.
func predict(t *testing.T, ckpt string, m volt.Module, dm volt.Loaders) []*tensors.Tensor {
	t.Helper()
	preds, err := testutil.NewTrainer(t, testutil.Quiet(volt.Config{})).Predict(t.Context(), m, dm, volt.FromCheckpoint(ckpt))
	if err != nil {
		t.Fatal(err)
	}
	return preds[0]
}

// maxDiff is the largest |a-b| / max(1, |b|).
func maxDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	worst := 0.0
	for i := range a {
		worst = max(worst, math.Abs(float64(a[i])-float64(b[i]))/max(1, math.Abs(float64(b[i]))))
	}
	return worst
}

func argmax(x []float32, classes int) []int32 {
	out := make([]int32, len(x)/classes)
	for i := range out {
		row := x[i*classes : (i+1)*classes]
		for j, v := range row {
			if v > row[out[i]] {
				out[i] = int32(j)
			}
		}
	}
	return out
}
