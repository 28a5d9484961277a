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

// gatherLogits is the MLP with a PredictStep that gathers the first
// example's scores: Gather has no ONNX lowering in volt.
type gatherLogits struct {
	Hidden []int
	LR     float64
}

func (m *gatherLogits) mlp() *mlpLogits { return &mlpLogits{Hidden: m.Hidden, LR: m.LR} }

// TrainingStep implements volt.Module.
func (m *gatherLogits) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.mlp().TrainingStep(s, b)
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *gatherLogits) ConfigureOptimizers() volt.Optimizers { return m.mlp().ConfigureOptimizers() }

// HParams implements volt.HParamser.
func (m *gatherLogits) HParams() map[string]any { return m.mlp().HParams() }

// PredictStep implements volt.PredictStepper.
func (m *gatherLogits) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	logits := m.mlp().PredictStep(s, b)
	return graph.Gather(logits, graph.Const(logits.Graph(), [][]int32{{0}}))
}

// TestExportONNXNamesUnsupportedOp: a PredictStep with an op the export
// cannot write fails with an error naming the op and the checkpoint, and
// writes nothing.
func TestExportONNXNamesUnsupportedOp(t *testing.T) {
	xs, ys := images(64, 3)
	m := &gatherLogits{Hidden: []int{16}, LR: 1e-3}
	tr := testutil.Fit(t, testutil.Quiet(volt.Config{MaxEpochs: 1, DisableCheckpointing: true}), m, rowLoaders(t, xs, ys, 32))
	ckpt := filepath.Join(t.TempDir(), "gather.ckpt")
	if err := tr.SaveCheckpoint(ckpt, true); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_, err := volt.ExportONNX(&buf, ckpt, m, []volt.InputSpec{{DType: dtypes.Float32, Dims: []int{784}}})
	if err == nil {
		t.Fatal("ExportONNX of a PredictStep with a Gather succeeded")
	}
	for _, want := range []string{"Gather", ckpt} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	var unsupported *onnxexport.UnsupportedOpError
	if !errors.As(err, &unsupported) || unsupported.Op != "Gather" {
		t.Errorf("error %q is not an *onnxexport.UnsupportedOpError for Gather (got %+v)", err, unsupported)
	}
	if buf.Len() != 0 {
		t.Errorf("a failed export wrote %d bytes", buf.Len())
	}
}
