package digits_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
)

// TestExportONNXRefusesAnInputNothingReads: declaring more inputs than the
// PredictStep reads (the CLI's --input-shape 784 --input-shape 10) is an
// error naming the unread input, where the export wrote a model with an
// input nothing reads; the inputs it reads export.
func TestExportONNXRefusesAnInputNothingReads(t *testing.T) {
	xs, ys := images(64, 3)
	m := &mlpLogits{Hidden: []int{16}, LR: 1e-3}
	tr := testutil.Fit(t, testutil.Quiet(volt.Config{MaxEpochs: 1, DisableCheckpointing: true}), m, rowLoaders(t, xs, ys, 32))
	ckpt := filepath.Join(t.TempDir(), "mlp.ckpt")
	if err := tr.SaveCheckpoint(ckpt, true); err != nil {
		t.Fatal(err)
	}
	f32 := func(dims ...int) volt.InputSpec { return volt.InputSpec{DType: dtypes.Float32, Dims: dims} }
	for _, tc := range []struct {
		name   string
		inputs []volt.InputSpec
		want   string // "" for no error
	}{
		{"one input", []volt.InputSpec{f32(784)}, ""},
		{"a second input", []volt.InputSpec{f32(784), f32(10)},
			`PredictStep computes its outputs without reading input 1 ("input_1", Float32 [10] after the batch axis), of the 2 inputs declared; declare one InputSpec (--input-shape) per input the step reads`},
	} {
		var buf bytes.Buffer
		_, err := volt.ExportONNX(&buf, ckpt, m, tc.inputs)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), ckpt)):
			t.Errorf("%s: ExportONNX error = %v, want one naming %s and saying %q", tc.name, err, ckpt, tc.want)
		case tc.want != "" && buf.Len() != 0:
			t.Errorf("%s: a refused export wrote %d bytes", tc.name, buf.Len())
		}
	}
}
