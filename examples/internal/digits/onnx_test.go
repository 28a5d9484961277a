package digits_test

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/advancedclimatesystems/gonnx"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/examples/internal/digits"
	"github.com/voltml/volt/internal/testutil"
	"gorgonia.org/tensor"
)

// mlpLogits is digits.MLP with a PredictStep returning the logits (the
// class scores), so that the ONNX model's numbers can be compared, not
// only its argmax.
type mlpLogits struct {
	Hidden []int
	LR     float64
}

func (m *mlpLogits) mlp() *digits.MLP { return &digits.MLP{Hidden: m.Hidden, LR: m.LR} }
func (m *mlpLogits) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.mlp().TrainingStep(s, b)
}
func (m *mlpLogits) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.mlp().Logits(s, b.Input(0))
}
func (m *mlpLogits) ConfigureOptimizers() volt.Optimizers { return m.mlp().ConfigureOptimizers() }
func (m *mlpLogits) HParams() map[string]any          { return m.mlp().HParams() }

// cnnLogits is digits.CNN with a PredictStep returning the logits.
type cnnLogits struct{ LR float64 }

func (m *cnnLogits) cnn() *digits.CNN { return &digits.CNN{LR: m.LR} }
func (m *cnnLogits) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.cnn().TrainingStep(s, b)
}
func (m *cnnLogits) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.cnn().Logits(s, b.Input(0))
}
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

func loaders(t testing.TB, xs [][]float32, ys []int32, batch int) volt.Loaders {
	rows, err := data.Rows(xs, ys)
	if err != nil {
		t.Fatal(err)
	}
	return volt.Loaders{Train: &data.DataLoader{Dataset: rows, BatchSize: batch},
		Predict: []data.Loader{&data.DataLoader{Dataset: rows, BatchSize: batch}}}
}

func TestExportONNXMLPGonnx(t *testing.T) {
	xs, ys := images(96, 7)
	m := &mlpLogits{Hidden: []int{32, 16}, LR: 1e-2}
	tr := testutil.Fit(t, testutil.Quiet(volt.Config{MaxEpochs: 1, DisableCheckpointing: true}), m, loaders(t, xs, ys, 32))
	path := filepath.Join(t.TempDir(), "mlp.ckpt")
	if err := tr.SaveCheckpoint(path, true); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	info, err := volt.ExportONNX(&buf, path, &mlpLogits{}, []volt.InputSpec{{DType: dtypes.Float32, Dims: []int{784}}},
		volt.ONNXInputNames("images"), volt.ONNXOutputName("logits"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", info)
	out := filepath.Join(t.TempDir(), "mlp.onnx")
	os.WriteFile(out, buf.Bytes(), 0o644)
	cmd := exec.Command("python3", "-c", "import onnx,sys; m=onnx.load(sys.argv[1]); onnx.checker.check_model(m, full_check=True); print(onnx.helper.printable_graph(m.graph))", out)
	b, err := cmd.CombinedOutput()
	t.Logf("%s %v", b, err)
	loaded, err := volt.LoadModule(path, &mlpLogits{})
	if err != nil {
		t.Fatal(err)
	}
	preds, err := testutil.NewTrainer(t, testutil.Quiet(volt.Config{})).Predict(context.Background(), loaded, loaders(t, xs, ys, 32))
	if err != nil {
		t.Fatal(err)
	}
	model, err := gonnx.NewModelFromBytes(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range preds[0] {
		flat := make([]float32, 0, 32*784)
		for _, x := range xs[i*32 : i*32+32] {
			flat = append(flat, x...)
		}
		res, err := model.Run(gonnx.Tensors{"images": tensor.New(tensor.WithShape(32, 784), tensor.WithBacking(flat))})
		if err != nil {
			t.Fatal(err)
		}
		got := res["logits"].Data().([]float32)
		w := tensors.MustCopyFlatData[float32](want)
		worst := 0.0
		for k := range w {
			worst = max(worst, math.Abs(float64(got[k]-w[k])))
		}
		t.Logf("batch %d: max |diff| %g", i, worst)
	}
}
