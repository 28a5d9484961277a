package digits_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/onnxexport"
	"github.com/voltml/volt/internal/testutil"
)

// headedLogits is the MLP with a PredictStep that ends in head, an op the
// export has no lowering for.
type headedLogits struct {
	Hidden []int
	LR     float64
	head   func(logits *graph.Node) *graph.Node
}

func (m *headedLogits) mlp() *mlpLogits { return &mlpLogits{Hidden: m.Hidden, LR: m.LR} }

// TrainingStep implements volt.Module.
func (m *headedLogits) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.mlp().TrainingStep(s, b)
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *headedLogits) ConfigureOptimizers() volt.Optimizers { return m.mlp().ConfigureOptimizers() }

// HParams implements volt.HParamser.
func (m *headedLogits) HParams() map[string]any { return m.mlp().HParams() }

// PredictStep implements volt.PredictStepper.
func (m *headedLogits) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.head(m.mlp().PredictStep(s, b))
}

// TestExportONNXNamesUnsupportedOp: a PredictStep with an op the export
// cannot write fails with an *onnxexport.UnsupportedOpError naming the op,
// the checkpoint and where the model builds the op (the head's line here,
// then PredictStep's), and writes nothing. Sort and TopK (which GoMLX
// builds from a sort) name Sort, as the docs say, where they said
// "backend "Go Backend" does not support functions (needed for closures)".
// A gather of another form than graph.Gather's (GatherSlices of axis 1)
// names Gather and what about it the export cannot write.
func TestExportONNXNamesUnsupportedOp(t *testing.T) {
	xs, ys := images(64, 3)
	for _, tc := range []struct {
		name, op, says string
		head           func(logits *graph.Node) *graph.Node
	}{
		{"sort", "Sort", "op Sort has no ONNX lowering in volt, built at ", func(l *graph.Node) *graph.Node { return graph.Sort(l, -1, false) }},
		{"topk", "Sort", "op Sort has no ONNX lowering in volt, built at ", func(l *graph.Node) *graph.Node { values, _ := graph.TopK(l, 3, -1); return values }},
		{"cumsum", "ReduceWindow", "op ReduceWindow is not supported: window [1 10], strides [1 1]: ONNX AveragePool needs two axes the window leaves alone (batch and channels), built at ", func(l *graph.Node) *graph.Node { return graph.CumSum(l, 1) }},
		{"interior_padding", "Pad", "op Pad is not supported: interior padding 1 on axis 1 (ONNX Pad pads only before and after an axis), built at ", func(l *graph.Node) *graph.Node {
			return graph.Pad(l, graph.ScalarZero(l.Graph(), l.DType()), compute.PadAxis{}, compute.PadAxis{Interior: 1})
		}},
		{"gather_slices", "Gather", "op Gather is not supported: start index map [1] and collapsed axes []: the export writes Gather and GatherND, which index the operand's leading axes and drop them, built at ", func(l *graph.Node) *graph.Node {
			return graph.GatherSlices(l, []int{1}, graph.Const(l.Graph(), [][]int32{{2}}), []int{4}, false)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &headedLogits{Hidden: []int{16}, LR: 1e-3, head: tc.head}
			tr := testutil.Fit(t, testutil.Quiet(volt.Config{MaxEpochs: 1, DisableCheckpointing: true}), m, rowLoaders(t, xs, ys, 32))
			ckpt := filepath.Join(t.TempDir(), tc.name+".ckpt")
			if err := tr.SaveCheckpoint(ckpt, true); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			_, err := volt.ExportONNX(&buf, ckpt, m, []volt.InputSpec{{DType: dtypes.Float32, Dims: []int{784}}})
			if err == nil {
				t.Fatalf("ExportONNX of a PredictStep with %s succeeded", tc.op)
			}
			t.Log(err)
			for _, want := range []string{tc.says, ckpt} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			var unsupported *onnxexport.UnsupportedOpError
			if !errors.As(err, &unsupported) || unsupported.Op != tc.op {
				t.Fatalf("error %q is not an *onnxexport.UnsupportedOpError for %s (got %+v)", err, tc.op, unsupported)
			}
			// The head's closure in this file, then PredictStep's line.
			place := regexp.MustCompile(`^digits_test\.TestExportONNXNamesUnsupportedOp\.func\d+ \(digits/onnx_unsupported_test\.go:\d+\) ← ` +
				`digits_test\.\(\*headedLogits\)\.PredictStep \(digits/onnx_unsupported_test\.go:\d+\)`)
			if !place.MatchString(unsupported.Place) {
				t.Errorf("Place %q does not match %s", unsupported.Place, place)
			}
			if buf.Len() != 0 {
				t.Errorf("a failed export wrote %d bytes", buf.Len())
			}
		})
	}
}
