package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
)

// TestParseShape checks the text of --input-shape.
func TestParseShape(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  bool
	}{
		{in: "784", want: []int{784}},
		{in: "1,28,28", want: []int{1, 28, 28}},
		{in: " 3 , 4 ", want: []int{3, 4}},
		{in: "", want: nil},
		{in: "28x28", err: true},
		{in: "0", err: true},
		{in: "-1,4", err: true},
		{in: "1,,2", err: true},
		{in: "[784]", err: true},
	}
	for _, tc := range tests {
		got, err := parseShape(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("parseShape(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// exportFiles are the files of the export fixtures: a non-empty
// checkpoint stand-in (the flags are checked before it is read), an empty
// one, a directory and an existing model.
var exportFiles = map[string]string{"m.ckpt": "x", "empty.ckpt": "", "old.onnx": "the user's file", "sub/keep": ""}

// loadExport resolves an export command line among exportFiles.
func loadExport(t *testing.T, args ...string) (loaded, error) {
	t.Helper()
	t.Chdir(t.TempDir())
	for name, text := range exportFiles {
		if strings.Contains(name, "/") {
			if err := os.MkdirAll(name[:strings.Index(name, "/")], 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return fixture{args: append([]string{"export"}, args...), opts: []Option{WithProgramName("prog")}}.loadHere(t)
}

// TestExportFlags checks what good export command lines resolve to: the
// inputs' dtypes and dimensions, and the checkpoint from the argument or
// --ckpt-path.
func TestExportFlags(t *testing.T) {
	f32, i32 := dtypes.Float32, dtypes.Int32
	tests := []struct {
		name   string
		args   []string
		inputs []volt.InputSpec
	}{
		{"one input", []string{"--onnx", "m.onnx", "--input-shape", "784", "m.ckpt"},
			[]volt.InputSpec{{DType: f32, Dims: []int{784}}}},
		{"dashes or underscores, argument first", []string{"m.ckpt", "--onnx=m.onnx", "--input_shape=1,28,28"},
			[]volt.InputSpec{{DType: f32, Dims: []int{1, 28, 28}}}},
		{"--ckpt-path", []string{"--onnx", "m.onnx", "--input-shape", "8", "--ckpt-path", "m.ckpt"},
			[]volt.InputSpec{{DType: f32, Dims: []int{8}}}},
		{"argument and the same --ckpt-path", []string{"--onnx", "m.onnx", "--input-shape", "8", "--ckpt-path", "m.ckpt", "m.ckpt"},
			[]volt.InputSpec{{DType: f32, Dims: []int{8}}}},
		{"two inputs, one dtype for both", []string{"--onnx", "m.onnx", "--input-shape", "4", "--input-shape", "", "--input-dtype", "int32", "m.ckpt"},
			[]volt.InputSpec{{DType: i32, Dims: []int{4}}, {DType: i32}}},
		{"a dtype per input, names", []string{"--onnx", "m.onnx", "--input-shape", "4", "--input-shape", "2,2", "--input-dtype", "Float32",
			"--input-dtype", "int32", "--input-name", "a", "--input-name", "b", "m.ckpt"},
			[]volt.InputSpec{{DType: f32, Dims: []int{4}}, {DType: i32, Dims: []int{2, 2}}}},
		{"--overwrite an existing file", []string{"--onnx", "old.onnx", "--overwrite", "--input-shape", "8", "m.ckpt"},
			[]volt.InputSpec{{DType: f32, Dims: []int{8}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := loadExport(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if l.inv.cmd != cmdExport || l.inv.rc.ckptPath != "m.ckpt" {
				t.Errorf("command %q, checkpoint %q; want export, m.ckpt", l.inv.cmd, l.inv.rc.ckptPath)
			}
			if got := fmt.Sprint(l.inv.export.inputs); got != fmt.Sprint(tc.inputs) {
				t.Errorf("inputs %s, want %s", got, fmt.Sprint(tc.inputs))
			}
		})
	}
}

// TestExportErrors checks each mistake on export's command line gives a
// usage error naming the flag or file and what would be valid.
func TestExportErrors(t *testing.T) {
	ok := []string{"--onnx", "m.onnx", "--input-shape", "8"}
	tests := []struct {
		name string
		args []string
		want []string // the lines of the error, in order
	}{
		{"missing --onnx", []string{"--input-shape", "8", "m.ckpt"},
			[]string{"flag --onnx: missing: give the file to write, e.g. --onnx model.onnx"}},
		{"missing --input-shape", []string{"--onnx", "m.onnx", "m.ckpt"},
			[]string{"flag --input-shape: missing: give the dimensions of each input after the batch axis, once per input in the order of the batch's inputs, e.g. --input-shape 784 or --input-shape 1,28,28 (checkpoints do not record them)"}},
		{"bad shape text", []string{"--onnx", "m.onnx", "--input-shape", "28x28", "m.ckpt"},
			[]string{`flag --input-shape: "28x28": want positive integers separated by commas, the dimensions after the batch axis (784, or 1,28,28 for [batch, 1, 28, 28])`}},
		{"zero dimension", []string{"--onnx", "m.onnx", "--input-shape", "1,0", "m.ckpt"},
			[]string{`flag --input-shape: "1,0": want positive integers separated by commas, the dimensions after the batch axis (784, or 1,28,28 for [batch, 1, 28, 28])`}},
		{"unknown dtype", append(slices.Clone(ok), "--input-dtype", "float", "m.ckpt"),
			[]string{`flag --input-dtype: "float": unknown dtype; valid: bfloat16, bool, float16, float32, float64, int16, int32, int64, int8, uint8`}},
		{"dtypes for the wrong number of inputs", append(slices.Clone(ok), "--input-dtype", "int32", "--input-dtype", "int32", "m.ckpt"),
			[]string{"flag --input-dtype: given 2 times for 1 inputs (--input-shape); give it once for all the inputs or once per input"}},
		{"names for the wrong number of inputs", append(slices.Clone(ok), "--input-name", "a", "--input-name", "b", "m.ckpt"),
			[]string{"flag --input-name: given 2 times for 1 inputs (--input-shape); give one name per input"}},
		{"empty output name", append(slices.Clone(ok), "--output-name=", "m.ckpt"),
			[]string{"flag --output-name: empty; give the name of the output in the ONNX graph (default output)"}},
		{"batch size 0", append(slices.Clone(ok), "--batch-size", "0", "m.ckpt"),
			[]string{"flag --batch-size: 0: must be at least 1"}},
		{"output exists", []string{"--onnx", "old.onnx", "--input-shape", "8", "m.ckpt"},
			[]string{"flag --onnx: old.onnx exists; volt does not replace a file it did not write: pass --overwrite to replace it, or give another path"}},
		{"output is a directory", []string{"--onnx", "sub", "--overwrite", "--input-shape", "8", "m.ckpt"},
			[]string{"flag --onnx: sub is a directory; give the path of the .onnx file to write"}},
		{"output directory missing", []string{"--onnx", "nodir/m.onnx", "--input-shape", "8", "m.ckpt"},
			[]string{"flag --onnx: nodir/m.onnx: directory nodir does not exist; create it first or give another path"}},
		{"checkpoint missing", append(slices.Clone(ok), "nope.ckpt"),
			[]string{"argument FILE.ckpt: nope.ckpt does not exist; give a checkpoint that fit wrote (volt_logs/version_N/checkpoints/*.ckpt)"}},
		{"checkpoint empty", append(slices.Clone(ok), "empty.ckpt"),
			[]string{"argument FILE.ckpt: empty.ckpt is empty, not a checkpoint"}},
		{"checkpoint is a directory", append(slices.Clone(ok), "sub"),
			[]string{"argument FILE.ckpt: sub is a directory; give a checkpoint file (volt_logs/version_N/checkpoints/*.ckpt)"}},
		{"no checkpoint", ok,
			[]string{"argument FILE.ckpt: missing: give the checkpoint to export (prog export --onnx model.onnx --input-shape 784 FILE.ckpt), or --ckpt-path FILE.ckpt"}},
		{"two checkpoints", append(slices.Clone(ok), "m.ckpt", "empty.ckpt"),
			[]string{`export takes one checkpoint, got 2 arguments ["m.ckpt" "empty.ckpt"] (options are flags: --key=value)`}},
		{"argument and another --ckpt-path", append(slices.Clone(ok), "--ckpt-path", "empty.ckpt", "m.ckpt"),
			[]string{"argument FILE.ckpt: m.ckpt, but --ckpt-path says empty.ckpt; give the checkpoint once"}},
		{"misspelt flag", append(slices.Clone(ok), "--onx", "m.onnx", "m.ckpt"),
			[]string{"flag --onx: unknown flag; did you mean --onnx?"}},
		{"every problem at once", []string{"--input-shape", "a", "--model.lr=x", "nope.ckpt"},
			[]string{"flag --onnx: missing: give the file to write, e.g. --onnx model.onnx",
				`flag --input-shape: "a": want positive integers separated by commas, the dimensions after the batch axis (784, or 1,28,28 for [batch, 1, 28, 28])`,
				`flag --model.lr: want a number, got "x"`,
				"argument FILE.ckpt: nope.ckpt does not exist; give a checkpoint that fit wrote (volt_logs/version_N/checkpoints/*.ckpt)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadExport(t, tc.args...)
			if err == nil {
				t.Fatalf("export %s: no error", strings.Join(tc.args, " "))
			}
			if !errors.Is(err, ErrUsage) {
				t.Errorf("error %q is not ErrUsage (exit status 2)", err)
			}
			if got := strings.Split(err.Error(), "\n"); !slices.Equal(got, tc.want) {
				t.Errorf("error:\n%s\nwant:\n%s", err, strings.Join(tc.want, "\n"))
			}
			if b, err := os.ReadFile("old.onnx"); err != nil || string(b) != exportFiles["old.onnx"] {
				t.Errorf("old.onnx now %q (%v); the user's file must stay as it was", b, err)
			}
		})
	}
}

// TestExportHelp checks "export -h" exits 0 with the usage of export's
// flags and the keys, as the other subcommands' help.
func TestExportHelp(t *testing.T) {
	for _, flag := range []string{"-h", "--help"} {
		var stderr bytes.Buffer
		err := Run(t.Context(), func() *testutil.Boring { return &testutil.Boring{} }, testutil.NewBoringDataModule,
			WithArgs("export", flag), WithOutput(&bytes.Buffer{}, &stderr), WithProgramName("prog"), WithEnvPrefix(""))
		if err != nil {
			t.Fatalf("export %s: %v", flag, err)
		}
		for _, want := range []string{"Usage: prog export --onnx FILE.onnx --input-shape DIMS... [--config FILE]... [--KEY=VALUE]... FILE.ckpt",
			"--onnx string", "--input_shape stringArray", "--input_dtype stringArray", "--overwrite", "--batch_size int (default: 1)",
			"--model.lr float", "--ckpt_path string"} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("export %s does not show %q:\n%s", flag, want, stderr.String())
			}
		}
	}
	var stderr bytes.Buffer
	_ = Run(t.Context(), func() *testutil.Boring { return &testutil.Boring{} }, testutil.NewBoringDataModule,
		WithArgs("--help"), WithOutput(&bytes.Buffer{}, &stderr), WithEnvPrefix(""))
	if !strings.Contains(stderr.String(), "  export ") {
		t.Errorf("the program's usage does not list export:\n%s", stderr.String())
	}
}
