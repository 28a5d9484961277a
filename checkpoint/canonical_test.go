package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/gomlx/compute/dtypes"
)

func TestWriteStringEscapes(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{`q"b\`, `"q\"b\\"`},
		{"\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"\x00\x1f", `"\u0000\u001f"`},
		{"<&> ß € \u2028", "\"<&> ß € \u2028\""},
		{"/", `"/"`},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		writeString(&buf, tt.in)
		if buf.String() != tt.want {
			t.Errorf("writeString(%q) = %s, want %s", tt.in, buf.String(), tt.want)
		}
	}
}

func TestEncodeHeaderIsCanonical(t *testing.T) {
	infos := []TensorInfo{
		{Name: "b", DType: dtypes.Float32, Shape: []int{2}, Offsets: [2]int64{0, 8}},
		{Name: "A", DType: dtypes.Int64, Shape: []int{}, Offsets: [2]int64{8, 16}},
		{Name: "z", DType: dtypes.Bool, Shape: []int{1, 1}, Offsets: [2]int64{16, 17}},
	}
	got := string(encodeHeader(infos, map[string]string{"k2": "v", "k1": `{"x":1}`}))
	want := `{"A":{"data_offsets":[8,16],"dtype":"I64","shape":[]},` +
		`"__metadata__":{"k1":"{\"x\":1}","k2":"v"},` +
		`"b":{"data_offsets":[0,8],"dtype":"F32","shape":[2]},` +
		`"z":{"data_offsets":[16,17],"dtype":"BOOL","shape":[1,1]}}`
	if got != want {
		t.Errorf("encodeHeader:\n got %s\nwant %s", got, want)
	}
}

// TestLoadAcceptsOtherHeaderLayouts checks that the checksum covers the
// canonical header, not the header's bytes: a file whose header was
// re-encoded by another writer (indented, other key order) still verifies.
func TestLoadAcceptsOtherHeaderLayouts(t *testing.T) {
	data := f32Bytes(1, 2)
	infos := []TensorInfo{{Name: "w", DType: dtypes.Float32, Shape: []int{2}, Offsets: [2]int64{0, 8}}}
	meta := voltMeta("volt_version", "other-writer", "checksum", "<delete>")
	h := sha256.New()
	h.Write(encodeHeader(infos, meta))
	h.Write(data)
	meta["checksum"] = "sha256:" + hex.EncodeToString(h.Sum(nil))

	header := map[string]any{
		"__metadata__": meta,
		"w":            map[string]any{"shape": []int{2}, "dtype": "F32", "data_offsets": []int{0, 8}},
	}
	path := writeRaw(t, header, data)
	f, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if f.VoltVersion != "other-writer" || !bytes.Equal(f.Tensors[0].Data, data) {
		t.Errorf("loaded %+v", f)
	}
	if string(f.State) != "{}" {
		t.Errorf("state %s, want {}", f.State)
	}
}
