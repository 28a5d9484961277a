package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/onnxcheck"
)

// TestExport trains the MLP for 20 steps, then exports the checkpoint with
// the export subcommand: the line printed describes the file that
// python3-onnx's checker reads (input images [batch, 784] float32, the
// predicted digit [batch] int32 through ArgMax).
func TestExport(t *testing.T) {
	dir := t.TempDir()
	run(t, dir, "fit", "--trainer.max_epochs=1", "--trainer.limit_train_batches=20", "--trainer.limit_val_batches=2")
	ckpts, err := filepath.Glob(filepath.Join(dir, "volt_logs", "version_0", "checkpoints", "*.ckpt"))
	if err != nil || len(ckpts) != 1 {
		t.Fatalf("checkpoints %v (%v); want one", ckpts, err)
	}
	path := filepath.Join(dir, "mnist.onnx")
	out := run(t, dir, "export", "--onnx", path, "--input-shape", "784", "--input-name", "images", "--output-name", "digit", ckpts[0])
	want := fmt.Sprintf("wrote %s (ONNX opset %d): input images float32[batch,784] -> output digit int32[batch]; batch axis dynamic (\"batch\")\n", path, volt.ONNXOpset)
	if out != want {
		t.Errorf("export printed %q, want %q", out, want)
	}
	r := onnxcheck.Check(t, path)
	wantIn := onnxcheck.Value{Name: "images", ElemType: 1, Dims: []any{"batch", 784.0}}
	wantOut := onnxcheck.Value{Name: "digit", ElemType: 6, Dims: []any{"batch"}}
	if fmt.Sprint(r.Inputs) != fmt.Sprint([]onnxcheck.Value{wantIn}) || fmt.Sprint(r.Outputs) != fmt.Sprint([]onnxcheck.Value{wantOut}) {
		t.Errorf("the checker reads inputs %v, outputs %v; want [%v], [%v]", r.Inputs, r.Outputs, wantIn, wantOut)
	}
	if r.Opsets["ai.onnx"] != volt.ONNXOpset || !slices.Contains(r.Ops, "ArgMax") || !slices.Contains(r.Ops, "MatMul") {
		t.Errorf("opsets %v, ops %v; want ai.onnx %d with MatMul and ArgMax", r.Opsets, r.Ops, volt.ONNXOpset)
	}
}
