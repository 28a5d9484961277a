package checkpoint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
)

func TestSaveRefusesInvalid(t *testing.T) {
	ok := Tensor{Name: "ok", DType: dtypes.Float32, Shape: []int{1}, Data: f32Bytes(1)}
	tests := []struct {
		name string
		file *File
		want string
	}{
		{"nil file", nil, "the *File is nil"},
		{"empty name", &File{Tensors: []Tensor{ok, {DType: dtypes.Float32, Shape: []int{1}, Data: f32Bytes(1)}}}, "a tensor has an empty name"},
		{"duplicate", &File{Tensors: []Tensor{ok, ok}}, `two tensors are named "ok"`},
		{"reserved name", &File{Tensors: []Tensor{{Name: "__metadata__", DType: dtypes.Uint8, Shape: []int{}, Data: []byte{1}}}}, "reserved"},
		{"invalid utf8 name", &File{Tensors: []Tensor{{Name: "a\xff", DType: dtypes.Uint8, Shape: []int{}, Data: []byte{1}}}}, "not valid UTF-8"},
		{"data too short", &File{Tensors: []Tensor{{Name: "w", DType: dtypes.Float32, Shape: []int{2, 3}, Data: f32Bytes(1)}}},
			`tensor "w": shape [2, 3] of F32 needs 6 elements × 4 bytes, but Data has 4 bytes`},
		{"data too long", &File{Tensors: []Tensor{{Name: "s", DType: dtypes.Uint8, Shape: []int{}, Data: []byte{1, 2}}}},
			`tensor "s": shape [] of U8 needs 1 elements × 1 bytes, but Data has 2 bytes`},
		{"negative dim", &File{Tensors: []Tensor{{Name: "n", DType: dtypes.Uint8, Shape: []int{-1}}}}, `tensor "n": dimension 0 of shape [-1] is negative`},
		{"unsupported dtype", &File{Tensors: []Tensor{{Name: "c", DType: dtypes.Complex64, Shape: []int{}, Data: make([]byte, 8)}}},
			`tensor "c": dtype Complex64 cannot be stored in a checkpoint (valid: F64, F32`},
		{"bad state", &File{State: json.RawMessage(`{"a":`)}, "State is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "c.ckpt")
			err := Save(path, tt.file)
			if err == nil {
				t.Fatal("Save succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q, want it to name %s and contain %q", err, path, tt.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("Save left %d files in the directory", len(entries))
			}
		})
	}
}
