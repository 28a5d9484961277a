package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"path/filepath"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/voltml/volt/checkpoint"
)

// writeCheckpoint saves a small checkpoint with a trainer-like state and
// returns its path.
func writeCheckpoint(t *testing.T) string {
	t.Helper()
	weights := make([]byte, 0, 4*6)
	for _, v := range []float32{1, 2, 3, 4, 5, 6} {
		weights = binary.LittleEndian.AppendUint32(weights, math.Float32bits(v))
	}
	f := &checkpoint.File{
		VoltVersion: "0.3.0-test",
		// As volt writes it: callback and scheduler states are bytes (base64
		// in JSON), JSON inside.
		State: json.RawMessage(`{"progress":{"epoch":4,"global_step":400},` +
			`"callbacks":{"ModelCheckpoint":"` + base64.StdEncoding.EncodeToString([]byte(`{"best_score":0.125}`)) + `"},` +
			`"schedulers":["` + base64.StdEncoding.EncodeToString([]byte(`{"last_lr":0.001}`)) + `",null],` +
			`"metrics":{"val_loss":0.125}}`),
		Tensors: []checkpoint.Tensor{
			{Name: "dense/weights", DType: dtypes.Float32, Shape: []int{2, 3}, Data: weights},
			{Name: "step", DType: dtypes.Int64, Shape: []int{}, Data: make([]byte, 8)},
		},
	}
	path := filepath.Join(t.TempDir(), "epoch=4.ckpt")
	if err := checkpoint.Save(path, f); err != nil {
		t.Fatal(err)
	}
	return path
}

// runVolt runs the command line and returns its exit code and outputs.
func runVolt(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}
