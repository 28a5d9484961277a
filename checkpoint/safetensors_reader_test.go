package checkpoint_test

// This file reads checkpoints with an independent, minimal safetensors parser
// written from the format's public description, and no code of package
// checkpoint:
//
//   - 8 bytes: N, an unsigned little-endian 64-bit integer, the header size;
//   - N bytes: a UTF-8 JSON object; each key but "__metadata__" maps to
//     {"dtype", "shape", "data_offsets": [begin, end]}, offsets relative to
//     the start of the byte buffer that follows the header;
//   - the rest: the byte buffer, little-endian values, row-major.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/voltml/volt/checkpoint"
)

// stEntry is one tensor of an independently parsed safetensors file.
type stEntry struct {
	DType       string  `json:"dtype"`
	Shape       []int   `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
	data        []byte
}

// stFile is an independently parsed safetensors file.
type stFile struct {
	headerJSON []byte
	tensors    map[string]*stEntry
	metadata   map[string]string
	order      []string // tensor names by data offsets (begin, then end)
	dataLen    int
}

// parseSafetensors parses raw as a safetensors file.
func parseSafetensors(t *testing.T, raw []byte) *stFile {
	t.Helper()
	if len(raw) < 8 {
		t.Fatalf("file of %d bytes has no header size", len(raw))
	}
	n := binary.LittleEndian.Uint64(raw[:8])
	if uint64(len(raw)-8) < n {
		t.Fatalf("header size %d exceeds the file", n)
	}
	header := raw[8 : 8+n]
	if header[0] != '{' {
		t.Fatalf("header starts with %q, want '{'", header[0])
	}
	buffer := raw[8+n:]
	var top map[string]json.RawMessage
	if err := json.Unmarshal(header, &top); err != nil {
		t.Fatalf("header JSON: %v", err)
	}
	f := &stFile{headerJSON: header, tensors: map[string]*stEntry{}, dataLen: len(buffer)}
	for k, v := range top {
		if k == "__metadata__" {
			if err := json.Unmarshal(v, &f.metadata); err != nil {
				t.Fatalf("metadata: %v", err)
			}
			continue
		}
		var e stEntry
		if err := json.Unmarshal(v, &e); err != nil {
			t.Fatalf("tensor %q: %v", k, err)
		}
		b, end := e.DataOffsets[0], e.DataOffsets[1]
		if b < 0 || end < b || end > int64(len(buffer)) {
			t.Fatalf("tensor %q: offsets %v outside the %d-byte buffer", k, e.DataOffsets, len(buffer))
		}
		e.data = buffer[b:end]
		f.tensors[k] = &e
		f.order = append(f.order, k)
	}
	sort.Slice(f.order, func(i, j int) bool {
		a, b := f.tensors[f.order[i]].DataOffsets, f.tensors[f.order[j]].DataOffsets
		return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1])
	})
	return f
}

// decode returns the values of e as float64s (bools as 0/1).
func decode(t *testing.T, e *stEntry) []float64 {
	t.Helper()
	sizes := map[string]int{"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2,
		"I8": 1, "U8": 1, "BOOL": 1, "U64": 8, "U32": 4, "U16": 2}
	size, ok := sizes[e.DType]
	if !ok {
		t.Fatalf("unknown dtype %q", e.DType)
	}
	var out []float64
	for i := 0; i+size <= len(e.data); i += size {
		b := e.data[i : i+size]
		var v float64
		switch e.DType {
		case "F64":
			v = math.Float64frombits(binary.LittleEndian.Uint64(b))
		case "F32":
			v = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		case "BF16":
			v = float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16))
		case "F16":
			v = halfToFloat(binary.LittleEndian.Uint16(b))
		case "I64":
			v = float64(int64(binary.LittleEndian.Uint64(b)))
		case "I32":
			v = float64(int32(binary.LittleEndian.Uint32(b)))
		case "I16":
			v = float64(int16(binary.LittleEndian.Uint16(b)))
		case "I8":
			v = float64(int8(b[0]))
		case "U8", "BOOL":
			v = float64(b[0])
		case "U64":
			v = float64(binary.LittleEndian.Uint64(b))
		case "U32":
			v = float64(binary.LittleEndian.Uint32(b))
		case "U16":
			v = float64(binary.LittleEndian.Uint16(b))
		}
		out = append(out, v)
	}
	return out
}

// halfToFloat decodes an IEEE 754 binary16 (normal and subnormal numbers).
func halfToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	if exp == 0 {
		return sign * frac / 1024 * math.Pow(2, -14)
	}
	return sign * (1 + frac/1024) * math.Pow(2, float64(exp-15))
}

// le encodes values little-endian with encoding/binary.
func le(t *testing.T, values any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.LittleEndian, values); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestIndependentSafetensorsReader(t *testing.T) {
	type want struct {
		dtype  string
		shape  []int
		values []float64
	}
	tests := []struct {
		tensor checkpoint.Tensor
		want   want
	}{
		{checkpoint.Tensor{Name: "w", DType: dtypes.Float32, Shape: []int{2, 2}, Data: le(t, []float32{1.5, -2, 0.25, 3e7})},
			want{"F32", []int{2, 2}, []float64{1.5, -2, 0.25, 3e7}}},
		{checkpoint.Tensor{Name: "d", DType: dtypes.Float64, Shape: []int{3}, Data: le(t, []float64{math.Pi, -1e-300, 0})},
			want{"F64", []int{3}, []float64{math.Pi, -1e-300, 0}}},
		{checkpoint.Tensor{Name: "h", DType: dtypes.Float16, Shape: []int{3}, Data: le(t, []uint16{0x3c00, 0xc000, 0x3555})},
			want{"F16", []int{3}, []float64{1, -2, 0.333251953125}}},
		{checkpoint.Tensor{Name: "b", DType: dtypes.BFloat16, Shape: []int{2}, Data: le(t, []uint16{0x3f80, 0xc040})},
			want{"BF16", []int{2}, []float64{1, -3}}},
		{checkpoint.Tensor{Name: "step", DType: dtypes.Int64, Shape: []int{}, Data: le(t, []int64{-42})},
			want{"I64", []int{}, []float64{-42}}},
		{checkpoint.Tensor{Name: "i32", DType: dtypes.Int32, Shape: []int{1, 2}, Data: le(t, []int32{-7, 1 << 30})},
			want{"I32", []int{1, 2}, []float64{-7, 1 << 30}}},
		{checkpoint.Tensor{Name: "i16", DType: dtypes.Int16, Shape: []int{1}, Data: le(t, []int16{-300})},
			want{"I16", []int{1}, []float64{-300}}},
		{checkpoint.Tensor{Name: "i8", DType: dtypes.Int8, Shape: []int{2}, Data: le(t, []int8{-128, 127})},
			want{"I8", []int{2}, []float64{-128, 127}}},
		{checkpoint.Tensor{Name: "u8", DType: dtypes.Uint8, Shape: []int{2}, Data: []byte{0, 255}},
			want{"U8", []int{2}, []float64{0, 255}}},
		{checkpoint.Tensor{Name: "mask", DType: dtypes.Bool, Shape: []int{3}, Data: []byte{1, 0, 1}},
			want{"BOOL", []int{3}, []float64{1, 0, 1}}},
		{checkpoint.Tensor{Name: "u64", DType: dtypes.Uint64, Shape: []int{1}, Data: le(t, []uint64{1 << 63})},
			want{"U64", []int{1}, []float64{1 << 63}}},
		{checkpoint.Tensor{Name: "u32", DType: dtypes.Uint32, Shape: []int{1}, Data: le(t, []uint32{4e9})},
			want{"U32", []int{1}, []float64{4e9}}},
		{checkpoint.Tensor{Name: "u16", DType: dtypes.Uint16, Shape: []int{1}, Data: le(t, []uint16{65535})},
			want{"U16", []int{1}, []float64{65535}}},
		{checkpoint.Tensor{Name: "empty", DType: dtypes.Float32, Shape: []int{0, 3}, Data: []byte{}},
			want{"F32", []int{0, 3}, nil}},
	}
	in := &checkpoint.File{VoltVersion: "1.2.3", State: json.RawMessage(`{"progress":{"epoch":2},"note":"a<b & \"c\""}`)}
	for _, tt := range tests {
		in.Tensors = append(in.Tensors, tt.tensor)
	}
	path := filepath.Join(t.TempDir(), "indep.safetensors")
	if err := checkpoint.Save(path, in); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := parseSafetensors(t, raw)

	for _, tt := range tests {
		e, ok := f.tensors[tt.tensor.Name]
		if !ok {
			t.Errorf("tensor %q missing; have %v", tt.tensor.Name, f.order)
			continue
		}
		if e.DType != tt.want.dtype || !reflect.DeepEqual(e.Shape, tt.want.shape) {
			t.Errorf("tensor %q: dtype %s shape %v, want %s %v", tt.tensor.Name, e.DType, e.Shape, tt.want.dtype, tt.want.shape)
		}
		if got := decode(t, e); !reflect.DeepEqual(got, tt.want.values) {
			t.Errorf("tensor %q: values %v, want %v", tt.tensor.Name, got, tt.want.values)
		}
	}
	if len(f.tensors) != len(tests) {
		t.Errorf("%d tensors, want %d", len(f.tensors), len(tests))
	}

	t.Run("layout", func(t *testing.T) {
		if len(f.headerJSON)%8 != 0 {
			t.Errorf("header size %d is not a multiple of 8", len(f.headerJSON))
		}
		if trimmed := bytes.TrimRight(f.headerJSON, " "); trimmed[len(trimmed)-1] != '}' {
			t.Errorf("header is not a JSON object padded with spaces")
		}
		if !sort.StringsAreSorted(f.order) {
			t.Errorf("data is not laid out by name: %v", f.order)
		}
		var end int64
		for _, name := range f.order {
			e := f.tensors[name]
			if e.DataOffsets[0] != end {
				t.Errorf("tensor %q starts at %d, want %d (contiguous)", name, e.DataOffsets[0], end)
			}
			end = e.DataOffsets[1]
		}
		if end != int64(f.dataLen) {
			t.Errorf("tensors end at %d, buffer has %d bytes", end, f.dataLen)
		}
	})

	t.Run("metadata", func(t *testing.T) {
		for k, v := range map[string]string{"format": "volt-checkpoint", "format_version": "1", "volt_version": "1.2.3",
			"state": `{"progress":{"epoch":2},"note":"a<b & \"c\""}`} {
			if f.metadata[k] != v {
				t.Errorf("metadata %q = %q, want %q", k, f.metadata[k], v)
			}
		}
	})

	t.Run("checksum", func(t *testing.T) {
		// Recompute the documented checksum with encoding/json: sorted keys,
		// no whitespace, no HTML escaping, without the "checksum" key.
		canon := map[string]any{}
		meta := map[string]string{}
		for k, v := range f.metadata {
			if k != "checksum" {
				meta[k] = v
			}
		}
		canon["__metadata__"] = meta
		for name, e := range f.tensors {
			canon[name] = map[string]any{"dtype": e.DType, "shape": e.Shape, "data_offsets": e.DataOffsets}
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(canon); err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		h.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		h.Write(raw[8+len(f.headerJSON):])
		if want := "sha256:" + hex.EncodeToString(h.Sum(nil)); f.metadata["checksum"] != want {
			t.Errorf("checksum %s, independently computed %s", f.metadata["checksum"], want)
		}
	})
}
