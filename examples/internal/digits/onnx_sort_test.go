package digits_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/onnxexport"
	"github.com/voltml/volt/internal/testutil"
)

// sortedLogits is the MLP with a PredictStep that sorts (or takes the top
// k of) its scores: Sort and TopK have no ONNX lowering in volt.
type sortedLogits struct {
	Hidden []int
	LR     float64
	TopK   bool
}

func (m *sortedLogits) mlp() *mlpLogits { return &mlpLogits{Hidden: m.Hidden, LR: m.LR} }

// TrainingStep implements volt.Module.
func (m *sortedLogits) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.mlp().TrainingStep(s, b)
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *sortedLogits) ConfigureOptimizers() volt.Optimizers { return m.mlp().ConfigureOptimizers() }

// HParams implements volt.HParamser.
func (m *sortedLogits) HParams() map[string]any { return m.mlp().HParams() }

// PredictStep implements volt.PredictStepper.
func (m *sortedLogits) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	logits := m.mlp().PredictStep(s, b)
	if m.TopK {
		values, _ := graph.TopK(logits, 3, -1)
		return values
	}
	return graph.Sort(logits, -1, false)
}

// TestExportONNXNamesSortAndTopK: a PredictStep that sorts or takes the
// top k (GoMLX sorts for it) fails naming Sort as having no ONNX lowering,
// as the docs say, where it said "backend "Go Backend" does not support
// functions (needed for closures)".
func TestExportONNXNamesSortAndTopK(t *testing.T) {
	xs, ys := images(64, 3)
	for _, topK := range []bool{false, true} {
		m := &sortedLogits{Hidden: []int{16}, LR: 1e-3, TopK: topK}
		tr := testutil.Fit(t, testutil.Quiet(volt.Config{MaxEpochs: 1, DisableCheckpointing: true}), m, rowLoaders(t, xs, ys, 32))
		ckpt := filepath.Join(t.TempDir(), "sorted.ckpt")
		if err := tr.SaveCheckpoint(ckpt, true); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		_, err := volt.ExportONNX(&buf, ckpt, m, []volt.InputSpec{{DType: dtypes.Float32, Dims: []int{784}}})
		const want = "ONNX export: op Sort has no ONNX lowering in volt (supported: "
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), ckpt) {
			t.Errorf("TopK %v: ExportONNX error = %v, want one naming %s and saying %q", topK, err, ckpt, want)
		}
		var unsupported *onnxexport.UnsupportedOpError
		if !errors.As(err, &unsupported) || unsupported.Op != "Sort" {
			t.Errorf("TopK %v: error %v is not an *onnxexport.UnsupportedOpError for Sort", topK, err)
		}
		if buf.Len() != 0 {
			t.Errorf("TopK %v: a failed export wrote %d bytes", topK, buf.Len())
		}
	}
}
