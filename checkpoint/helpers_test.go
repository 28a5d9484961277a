package checkpoint

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gomlx/compute/dtypes"
)

// f32Bytes returns the little-endian bytes of vs.
func f32Bytes(vs ...float32) []byte {
	out := make([]byte, 0, 4*len(vs))
	for _, v := range vs {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
	}
	return out
}

// i64Bytes returns the little-endian bytes of vs.
func i64Bytes(vs ...int64) []byte {
	out := make([]byte, 0, 8*len(vs))
	for _, v := range vs {
		out = binary.LittleEndian.AppendUint64(out, uint64(v))
	}
	return out
}

// sampleFile returns a small checkpoint with a few dtypes and a state.
func sampleFile() *File {
	return &File{
		VoltVersion: "0.1.0-test",
		State:       json.RawMessage(`{"progress": {"epoch": 3, "global_step": 120}, "callbacks": {"EarlyStopping": {"wait": 1}}, "metrics": {"val_loss": 0.25}}`),
		Tensors: []Tensor{
			{Name: "layer1/weights", DType: dtypes.Float32, Shape: []int{2, 3}, Data: f32Bytes(1, 2, 3, 4, 5, -6.5)},
			{Name: "layer1/bias", DType: dtypes.Float32, Shape: []int{3}, Data: f32Bytes(0.5, 0, -1)},
			{Name: "global_step", DType: dtypes.Int64, Shape: []int{}, Data: i64Bytes(120)},
			{Name: "mask", DType: dtypes.Bool, Shape: []int{4}, Data: []byte{1, 0, 0, 1}},
		},
	}
}

// saveSample saves sampleFile in a new temp dir and returns its path.
func saveSample(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.ckpt")
	if err := Save(path, sampleFile()); err != nil {
		t.Fatalf("Save: %v", err)
	}
	return path
}

// writeRaw writes a safetensors file with the given header object (encoded
// with encoding/json) and data, and returns its path.
func writeRaw(t *testing.T, header map[string]any, data []byte) string {
	t.Helper()
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	buf := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	buf = append(append(buf, h...), data...)
	path := filepath.Join(t.TempDir(), "raw.safetensors")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// voltMeta returns valid volt metadata with a dummy checksum, overridden by
// kv pairs.
func voltMeta(kv ...string) map[string]string {
	m := map[string]string{
		"format": Format, "format_version": "1", "volt_version": "x", "state": "{}",
		"checksum": "sha256:" + string(make64('0')),
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "<delete>" {
			delete(m, kv[i])
		} else {
			m[kv[i]] = kv[i+1]
		}
	}
	return m
}

// make64 returns 64 copies of c.
func make64(c byte) []byte {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return b
}
