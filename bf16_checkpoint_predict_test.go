package volt_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/nn"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// softmaxClassifier is detect_anomaly_labels_test.go's classifier whose
// PredictStep returns class probabilities: a layer normalization and a
// softmax, which GoMLX fuses where the backend has the fused op.
type softmaxClassifier struct{ classifier }

func (m *softmaxClassifier) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	x := nn.LayerNorm(b.Input(0), []int{-1}, 1e-5, nil, nil, nil)
	return graph.Softmax(layers.DenseWithBias(s.Scope().In("dense"), x, 5), -1)
}

// TestBF16CheckpointPredicts: a "bf16-true" checkpoint predicts, in
// LoadPredictor and in a "bf16-true" Trainer (the Go backend's fused softmax
// and layer normalization run on float32 and float64 only: every Predict
// failed with "FusedSoftmax: dtype BFloat16: op not implemented"), and a
// float32 Trainer refuses it naming the dtype mismatch and what would run
// it (it said "shape mismatch").
func TestBF16CheckpointPredicts(t *testing.T) {
	tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 1, Precision: "bf16-true"}), &softmaxClassifier{}, classData(-1, 0))
	path := filepath.Join(t.TempDir(), "bf16.ckpt")
	if err := tr.SaveCheckpoint(path, false); err != nil {
		t.Fatal(err)
	}
	probabilities := func(t *testing.T, who string, got [][]float32) {
		t.Helper()
		for i, r := range got {
			sum := float32(0)
			for _, p := range r {
				sum += p
			}
			if len(r) != 5 || math.Abs(float64(sum-1)) > 0.02 { // bfloat16 keeps 8 bits of mantissa
				t.Errorf("%s: row %d is %v, want 5 probabilities summing to 1", who, i, r)
			}
		}
	}
	p, err := volt.LoadPredictor(path, &softmaxClassifier{})
	if err != nil {
		t.Fatal(err)
	}
	// classLoader's examples 0 and 8.
	out, err := p.Predict([][]float32{{0, 0, 1, 0}, {0.5, 2. / 3, 1, -0.25}})
	if err != nil {
		t.Fatalf("Predictor.Predict: %v", err)
	}
	fromPredictor, ok := out.Value().([][]float32)
	if !ok {
		t.Fatalf("Predictor.Predict: %s, want [2][5]float32", out.Shape())
	}
	probabilities(t, "Predictor", fromPredictor)

	dm := volt.Loaders{Predict: []data.Loader{classLoader(-1, 0)}}
	bf16 := testutil.NewTrainer(t, quiet(volt.Config{Precision: "bf16-true"}))
	fromTrainer, err := bf16.PredictRows(t.Context(), &softmaxClassifier{}, dm, volt.FromCheckpoint(path))
	if err != nil {
		t.Fatalf("Trainer.Predict in bf16-true: %v", err)
	}
	probabilities(t, "Trainer", fromTrainer)
	for i, example := range []int{0, 8} {
		for k := range 5 {
			if a, b := fromPredictor[i][k], fromTrainer[example][k]; math.Abs(float64(a-b)) > 0.01 {
				t.Errorf("example %d, class %d: Predictor %v, Trainer %v", example, k, a, b)
			}
		}
	}

	f32 := testutil.NewTrainer(t, quiet(volt.Config{}))
	_, err = f32.Predict(t.Context(), &softmaxClassifier{}, dm, volt.FromCheckpoint(path))
	want := `dtype mismatch: /dense/dense/weights (checkpoint (BFloat16)[4, 5], module (Float32)[4, 5]: the same dimensions in another precision); its weights are BFloat16: run it with Config.Precision "bf16-true"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("float32 Trainer.Predict of a bf16 checkpoint: %v, want an error saying %q", err, want)
	}
}
