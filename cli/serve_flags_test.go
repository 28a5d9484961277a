package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/voltml/volt/internal/testutil"
)

// TestServeFlags: a good serve command line resolves to its address and
// handler config; each bad one is a usage error naming its flag.
func TestServeFlags(t *testing.T) {
	files := map[string]string{"m.ckpt": "not read here"}
	for _, tc := range []struct {
		name string
		args []string
		says []string // nil: the line is good
	}{
		{"good", []string{"serve", "--input-shape", "1,28,28", "--addr", "127.0.0.1:0", "--max-batch", "4", "--wait", "5ms", "--input-dtype", "int32", "m.ckpt"}, nil},
		{"no input shape", []string{"serve", "m.ckpt"}, []string{"flag --input-shape: missing: give the dimensions of the input after the batch axis, e.g. --input-shape 784"}},
		{"two inputs", []string{"serve", "--input-shape", "8", "--input-shape", "2", "m.ckpt"}, []string{"flag --input-shape: given 2 times; serve takes modules with one input"}},
		{"bad shape", []string{"serve", "--input-shape", "8x2", "m.ckpt"}, []string{`flag --input-shape: "8x2": want positive integers separated by commas`}},
		{"bad dtype", []string{"serve", "--input-shape", "8", "--input-dtype", "bool", "m.ckpt"}, []string{`flag --input-dtype: "bool": serve takes float32, float64, int32 or int64`}},
		{"bad batch and wait", []string{"serve", "--input-shape", "8", "--max-batch", "0", "--wait", "0s", "m.ckpt"},
			[]string{"flag --max-batch: 0: must be at least 1", "flag --wait: 0s: must be positive"}},
		{"rows over batch", []string{"serve", "--input-shape", "8", "--max-batch", "4", "--max-rows", "5", "m.ckpt"}, []string{"flag --max-rows: 5 is more than --max-batch 4"}},
		{"no checkpoint", []string{"serve", "--input-shape", "8"}, []string{"argument FILE.ckpt: missing: give the checkpoint to serve (prog serve --input-shape 784 FILE.ckpt)"}},
		{"missing checkpoint", []string{"serve", "--input-shape", "8", "gone.ckpt"}, []string{"gone.ckpt does not exist"}},
		{"two checkpoints", []string{"serve", "--input-shape", "8", "m.ckpt", "n.ckpt"}, []string{"serve takes one checkpoint, got 2 arguments"}},
		{"misspelt flag", []string{"serve", "--input-shap", "8", "m.ckpt"}, []string{"--input_shape"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := fixture{files: files, args: tc.args, opts: []Option{WithProgramName("prog")}}.load(t)
			if tc.says == nil {
				if err != nil {
					t.Fatal(err)
				}
				r := l.inv.serve
				if r.addr != "127.0.0.1:0" || r.cfg.MaxBatch != 4 || r.cfg.Wait != 5*time.Millisecond ||
					r.cfg.Input.DType != dtypes.Int32 || len(r.cfg.Input.Dims) != 3 || l.inv.rc.ckptPath != "m.ckpt" {
					t.Errorf("resolved %+v, checkpoint %q", r, l.inv.rc.ckptPath)
				}
				return
			}
			if !errors.Is(err, ErrUsage) {
				t.Fatalf("error %v; want a usage error", err)
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}

// TestServeHelp: "serve --help" shows serve's usage, its flags with their
// defaults, and the keys; the program's usage lists serve.
func TestServeHelp(t *testing.T) {
	var stderr bytes.Buffer
	err := Run(t.Context(), func() *testutil.Boring { return &testutil.Boring{} }, testutil.NewBoringDataModule,
		WithArgs("serve", "--help"), WithOutput(&bytes.Buffer{}, &stderr), WithProgramName("prog"), WithEnvPrefix(""))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Usage: prog serve --input-shape DIMS [--addr HOST:PORT]", `{"inputs": [ROW, …]}`,
		"--addr string (default: 127.0.0.1:8080)", "--max_batch int (default: 16)", "--wait duration (default: 2ms)", "--model.lr float"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("serve --help does not show %q:\n%s", want, stderr.String())
		}
	}
	stderr.Reset()
	_ = Run(t.Context(), func() *testutil.Boring { return &testutil.Boring{} }, testutil.NewBoringDataModule,
		WithArgs("--help"), WithOutput(&bytes.Buffer{}, &stderr), WithEnvPrefix(""))
	if !strings.Contains(stderr.String(), "  serve ") {
		t.Errorf("the program's usage does not list serve:\n%s", stderr.String())
	}
}
