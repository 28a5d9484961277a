package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		tensor Tensor
	}{
		{"F64", Tensor{Name: "a", DType: dtypes.Float64, Shape: []int{2}, Data: bytes.Repeat([]byte{1}, 16)}},
		{"F32 matrix", Tensor{Name: "a", DType: dtypes.Float32, Shape: []int{2, 2}, Data: f32Bytes(1, 2, 3, 4)}},
		{"F16", Tensor{Name: "a", DType: dtypes.Float16, Shape: []int{3}, Data: []byte{1, 2, 3, 4, 5, 6}}},
		{"BF16", Tensor{Name: "a", DType: dtypes.BFloat16, Shape: []int{1, 1, 2}, Data: []byte{1, 2, 3, 4}}},
		{"I64 scalar", Tensor{Name: "a", DType: dtypes.Int64, Shape: []int{}, Data: i64Bytes(-7)}},
		{"I32", Tensor{Name: "a", DType: dtypes.Int32, Shape: []int{1}, Data: []byte{1, 2, 3, 4}}},
		{"I16", Tensor{Name: "a", DType: dtypes.Int16, Shape: []int{1}, Data: []byte{1, 2}}},
		{"I8", Tensor{Name: "a", DType: dtypes.Int8, Shape: []int{2}, Data: []byte{0xff, 1}}},
		{"U8", Tensor{Name: "a", DType: dtypes.Uint8, Shape: []int{2}, Data: []byte{0xff, 1}}},
		{"BOOL", Tensor{Name: "a", DType: dtypes.Bool, Shape: []int{3}, Data: []byte{1, 0, 1}}},
		{"U64", Tensor{Name: "a", DType: dtypes.Uint64, Shape: []int{1}, Data: i64Bytes(1 << 60)}},
		{"U32", Tensor{Name: "a", DType: dtypes.Uint32, Shape: []int{1}, Data: []byte{9, 8, 7, 6}}},
		{"U16", Tensor{Name: "a", DType: dtypes.Uint16, Shape: []int{1}, Data: []byte{9, 8}}},
		{"empty", Tensor{Name: "a", DType: dtypes.Float32, Shape: []int{0, 5}, Data: []byte{}}},
		{"unicode name", Tensor{Name: "poids/ß\"q\"\n", DType: dtypes.Uint8, Shape: []int{1}, Data: []byte{3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.ckpt")
			in := &File{VoltVersion: "v", State: json.RawMessage(`{"a": 1}`), Tensors: []Tensor{tt.tensor}}
			if err := Save(path, in); err != nil {
				t.Fatalf("Save: %v", err)
			}
			out, err := Load(path)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if len(out.Tensors) != 1 {
				t.Fatalf("Load returned %d tensors, want 1", len(out.Tensors))
			}
			got := out.Tensors[0]
			if got.Name != tt.tensor.Name || got.DType != tt.tensor.DType ||
				!slices.Equal(got.Shape, tt.tensor.Shape) || !bytes.Equal(got.Data, tt.tensor.Data) {
				t.Errorf("round trip: got %+v, want %+v", got, tt.tensor)
			}
			if string(out.State) != `{"a":1}` || out.VoltVersion != "v" {
				t.Errorf("got state %s version %q, want {\"a\":1} and \"v\"", out.State, out.VoltVersion)
			}
		})
	}
}

func TestSaveSortsTensorsAndPadsHeader(t *testing.T) {
	path := saveSample(t)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(raw[:8])
	if n%8 != 0 {
		t.Errorf("header length %d is not a multiple of 8", n)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tn := range f.Tensors {
		names = append(names, tn.Name)
	}
	want := []string{"global_step", "layer1/bias", "layer1/weights", "mask"}
	if !slices.Equal(names, want) {
		t.Errorf("tensor order %v, want %v", names, want)
	}
	if w := f.Tensor("layer1/weights"); w == nil || !bytes.Equal(w.Data, f32Bytes(1, 2, 3, 4, 5, -6.5)) {
		t.Errorf("layer1/weights = %+v", w)
	}
	if f.Tensor("nope") != nil {
		t.Error(`Tensor("nope") != nil`)
	}
}

func TestSaveStateHandling(t *testing.T) {
	tests := []struct {
		name, state, want string
	}{
		{"empty", "", "{}"},
		{"compacted", "{ \"x\" : [1, 2] }\n", `{"x":[1,2]}`},
		{"html chars kept", `{"a":"<&>"}`, `{"a":"<&>"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.ckpt")
			if err := Save(path, &File{State: json.RawMessage(tt.state)}); err != nil {
				t.Fatal(err)
			}
			f, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(f.State) != tt.want {
				t.Errorf("state %s, want %s", f.State, tt.want)
			}
		})
	}
}

func TestSaveOverwrites(t *testing.T) {
	path := saveSample(t)
	if err := Save(path, &File{VoltVersion: "second"}); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.VoltVersion != "second" || len(f.Tensors) != 0 {
		t.Errorf("got version %q with %d tensors, want the second save", f.VoltVersion, len(f.Tensors))
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", info.Mode().Perm())
	}
}
