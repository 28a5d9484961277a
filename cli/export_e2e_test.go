package cli

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/onnxcheck"
	"github.com/voltml/volt/internal/testutil"
)

// sortBoring is testutil.Boring with a PredictStep that sorts each
// example's predictions: Sort has no ONNX lowering in volt.
type sortBoring struct{ testutil.Boring }

// PredictStep implements volt.PredictStepper.
func (m *sortBoring) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return graph.Sort(m.Forward(s, b.Input(0)), -1, false)
}

// fitCheckpoint fits program (see TestMain) for one epoch in dir and
// returns the checkpoint it wrote, relative to dir.
func fitCheckpoint(t *testing.T, program, dir string) string {
	t.Helper()
	if _, stderr, code := runProgramAs(t, program, dir, "fit", "--trainer.max_epochs=1", "--trainer.disable_model_summary"); code != 0 {
		t.Fatalf("fit: exit status %d\nstderr:\n%s", code, stderr)
	}
	ckpts, err := filepath.Glob(filepath.Join(dir, "volt_logs", "version_0", "checkpoints", "*.ckpt"))
	if err != nil || len(ckpts) != 1 {
		t.Fatalf("checkpoints after fit: %v (%v); want one", ckpts, err)
	}
	rel, err := filepath.Rel(dir, ckpts[0])
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestExportEndToEnd uses export as a user would: fit the program, then
// export the checkpoint in a new process; python3-onnx's checker accepts
// the file, and gonnx and onnx-go run it within 1e-5 of Trainer.Predict at
// batch sizes other than the traced one. Exporting again onto the file is
// refused and leaves it as it was unless --overwrite.
func TestExportEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs training and export processes")
	}
	dir := t.TempDir()
	ckpt := fitCheckpoint(t, "1", dir)

	if _, stderr, code := runProgram(t, dir, "export", "-h"); code != 0 || !strings.Contains(stderr, "--input_shape") {
		t.Errorf("export -h: exit status %d, stderr:\n%s", code, stderr)
	}
	args := []string{"export", "--onnx", "boring.onnx", "--input-shape", "8", "--input-name", "features", "--output-name", "y", ckpt}
	out := mustRun(t, dir, args...)
	want := fmt.Sprintf("wrote boring.onnx (ONNX opset %d): input features float32[batch,8] -> output y float32[batch,1]; batch axis dynamic (\"batch\")\n", volt.ONNXOpset)
	if out != want {
		t.Errorf("export printed %q, want %q", out, want)
	}
	path := filepath.Join(dir, "boring.onnx")
	model, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	r := onnxcheck.Check(t, path)
	if r.Opsets["ai.onnx"] != volt.ONNXOpset {
		t.Errorf("opsets %v, want ai.onnx %d", r.Opsets, volt.ONNXOpset)
	}
	wantIn := onnxcheck.Value{Name: "features", ElemType: 1, Dims: []any{"batch", 8.0}}
	wantOut := onnxcheck.Value{Name: "y", ElemType: 1, Dims: []any{"batch", 1.0}}
	if fmt.Sprint(r.Inputs) != fmt.Sprint([]onnxcheck.Value{wantIn}) || fmt.Sprint(r.Outputs) != fmt.Sprint([]onnxcheck.Value{wantOut}) {
		t.Errorf("the checker reads inputs %v, outputs %v; want [%v], [%v]", r.Inputs, r.Outputs, wantIn, wantOut)
	}

	// Trainer.Predict of the checkpoint, in batches of 5 and a last of 3.
	examples := testutil.Regression(13, 9)
	preds, err := testutil.NewTrainer(t, testutil.Quiet(volt.Config{})).Predict(t.Context(), &testutil.Boring{},
		volt.Loaders{Predict: []data.Loader{&data.DataLoader{Dataset: examples, BatchSize: 5}}}, volt.FromCheckpoint(filepath.Join(dir, ckpt)))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range preds[0] {
		var x []float32
		for _, e := range examples[5*i : min(5*i+5, len(examples))] {
			x = append(x, e.Inputs[0].Value.([]float32)...)
		}
		n := len(x) / 8
		want := tensors.MustCopyFlatData[float32](p)
		if slices.Min(want) == slices.Max(want) {
			t.Fatalf("batch %d: Trainer.Predict gave %v, one value for every example; the comparison would not test the weights", i, want)
		}
		runtimes := map[string]func() ([]float32, error){
			"gonnx": func() ([]float32, error) { return onnxcheck.Gonnx(t, model, "features", x, []int{n, 8}, "y") },
			"onnx-go": func() ([]float32, error) {
				got, dims, err := onnxcheck.Gorgonnx(t, path, x, []int{n, 8})
				if err == nil && !slices.Equal(dims, []int{n, 1}) {
					err = fmt.Errorf("output shape %v, want [%d 1]", dims, n)
				}
				return got, err
			},
		}
		for name, run := range runtimes {
			got, err := run()
			if err != nil {
				t.Fatalf("batch %d: %s: %v", i, name, err)
			}
			if len(got) != len(want) {
				t.Fatalf("batch %d: %s gave %d values, Trainer.Predict %d", i, name, len(got), len(want))
			}
			worst := 0.0
			for j := range got {
				worst = max(worst, math.Abs(float64(got[j])-float64(want[j]))/max(1, math.Abs(float64(want[j]))))
			}
			if worst > 1e-5 {
				t.Errorf("batch %d: %s differs from Trainer.Predict by up to %g (> 1e-5): %v, want %v", i, name, worst, got, want)
			} else {
				t.Logf("batch %d (%d examples): %s: max |diff| %.3g", i, n, name, worst)
			}
		}
	}

	// The file is the user's now: export refuses to replace it.
	_, stderr, code := runProgram(t, dir, args...)
	if code != 2 || !strings.Contains(stderr, "flag --onnx: boring.onnx exists") || !strings.Contains(stderr, "--overwrite") {
		t.Errorf("export onto an existing file: exit status %d, stderr %q; want 2, naming the file and --overwrite", code, stderr)
	}
	if again, err := os.ReadFile(path); err != nil || string(again) != string(model) {
		t.Errorf("a refused export changed boring.onnx (%v)", err)
	}
	mustRun(t, dir, append(args[:len(args)-1:len(args)-1], "--overwrite", ckpt)...)
	if got := entries(t, dir); !slices.Equal(got, []string{"boring.onnx", "volt_logs"}) {
		t.Errorf("files after the exports %v, want [boring.onnx volt_logs] (no temporary file left)", got)
	}
}

// TestExportUnsupportedOp: exporting a module whose PredictStep has an op
// without an ONNX lowering fails (exit status 1) naming the op, the line
// of PredictStep that builds it and the checkpoint, and leaves no file.
func TestExportUnsupportedOp(t *testing.T) {
	if testing.Short() {
		t.Skip("runs training and export processes")
	}
	dir := t.TempDir()
	ckpt := fitCheckpoint(t, "sort", dir)
	_, stderr, code := runProgramAs(t, "sort", dir, "export", "--onnx", "sort.onnx", "--input-shape", "8", ckpt)
	for _, want := range []string{"ONNX export: op Sort has no ONNX lowering in volt, built at cli.(*sortBoring).PredictStep (cli/export_e2e_test.go:", ckpt} {
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("export: exit status %d, stderr %q; want 1 and %q", code, stderr, want)
		}
	}
	if got := entries(t, dir); !slices.Equal(got, []string{"volt_logs"}) {
		t.Errorf("files after a failed export %v, want [volt_logs]", got)
	}
}

// TestWriteNew checks the writes of export: a new file, an existing one
// refused (also when it appeared after the flags were checked) and left as
// it was, replaced with overwrite, and no temporary file left either way.
func TestWriteNew(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.onnx")
	if err := writeNew(path, []byte("one"), false); err != nil {
		t.Fatal(err)
	}
	err := writeNew(path, []byte("two"), false)
	if err == nil || !strings.Contains(err.Error(), "m.onnx exists; volt does not replace a file it did not write: pass --overwrite") {
		t.Errorf("writing onto an existing file without overwrite: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Errorf("the refused write left %q, want %q", b, "one")
	}
	if err := writeNew(path, []byte("three"), true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "three" {
		t.Errorf("overwrite left %q, want %q", b, "three")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v (%v), want 0644", fi.Mode(), err)
	}
	if err := writeNew(filepath.Join(dir, "none", "m.onnx"), []byte("x"), false); err == nil || !strings.Contains(err.Error(), "writing "+filepath.Join(dir, "none", "m.onnx")) {
		t.Errorf("writing into a missing directory: %v", err)
	}
	if got := entries(t, dir); !slices.Equal(got, []string{"m.onnx"}) {
		t.Errorf("files %v, want [m.onnx]", got)
	}
}

// scaledBoring is testutil.Boring with a PredictStep that scales the
// predictions by the batch size: a constant that holds it, so the exported
// batch axis is fixed.
type scaledBoring struct{ testutil.Boring }

// PredictStep implements volt.PredictStepper.
func (m *scaledBoring) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	y := m.Forward(s, b.Input(0))
	return graph.MulScalar(y, float64(y.Shape().Dimensions[0]))
}

// TestExportFixedBatch: where the batch axis cannot be dynamic, export's
// line says so, at the traced --batch-size, with the export's reason, and
// the file declares that batch size.
func TestExportFixedBatch(t *testing.T) {
	dir := t.TempDir()
	tr := testutil.Fit(t, testutil.Quiet(volt.Config{MaxEpochs: 1, DisableCheckpointing: true}), &scaledBoring{}, testutil.BoringData())
	ckpt := filepath.Join(dir, "flat.ckpt")
	if err := tr.SaveCheckpoint(ckpt, true); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "flat.onnx")
	var stdout, stderr strings.Builder
	err := Run(t.Context(), func() *scaledBoring { return &scaledBoring{} }, testutil.NewBoringDataModule,
		WithArgs("export", "--onnx", path, "--input-shape", "8", "--batch-size", "3", ckpt), WithOutput(&stdout, &stderr), WithEnvPrefix(""))
	if err != nil {
		t.Fatalf("export: %v\n%s", err, stderr.String())
	}
	var buf strings.Builder
	info, err := volt.ExportONNX(&buf, ckpt, &scaledBoring{}, []volt.InputSpec{{DType: dtypes.Float32, Dims: []int{8}}}, volt.ONNXBatchSize(3))
	if err != nil {
		t.Fatal(err)
	}
	if info.DynamicBatch || info.FixedReason == "" {
		t.Fatalf("volt.ExportONNX: dynamic %v, reason %q; the test needs a model whose batch axis is fixed", info.DynamicBatch, info.FixedReason)
	}
	want := fmt.Sprintf("wrote %s (ONNX opset %d): input input float32[3,8] -> output output float32[3,1]; batch axis fixed at 3 (one shape per export; --batch-size sets it): %s\n", path, volt.ONNXOpset, info.FixedReason)
	if stdout.String() != want {
		t.Errorf("export printed %q, want %q", stdout.String(), want)
	}
	t.Log(strings.TrimSpace(stdout.String()))
	r := onnxcheck.Check(t, path)
	if wantIn := (onnxcheck.Value{Name: "input", ElemType: 1, Dims: []any{3.0, 8.0}}); fmt.Sprint(r.Inputs) != fmt.Sprint([]onnxcheck.Value{wantIn}) {
		t.Errorf("the checker reads inputs %v, want [%v]", r.Inputs, wantIn)
	}
}
