package data

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestSafetensorsMatchesWriter: every tensor of arrays.safetensors (written
// by gen_safetensors.py from the format's specification) reads back as the
// writer's values, example by example, with the Field type of its dtype.
func TestSafetensorsMatchesWriter(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "safetensors", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]struct {
		DType  string
		Shape  []int
		Values []float64
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	sf, err := OpenSafetensors(filepath.Join("testdata", "safetensors", "arrays.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	types := map[string]string{"BOOL": "[]bool", "U8": "[]uint8", "I8": "[]int32", "I16": "[]int32", "U16": "[]int32",
		"I32": "[]int32", "U32": "[]int64", "I64": "[]int64", "U64": "[]int64", "F16": "[]float32", "BF16": "[]float32",
		"F32": "[]float32", "F64": "[]float64"}
	if len(sf.Names()) != len(want) {
		t.Errorf("Names() = %v, want %d tensors", sf.Names(), len(want))
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			a, err := sf.Tensor(name)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a.Shape, w.Shape) {
				t.Fatalf("shape %v, want %v", a.Shape, w.Shape)
			}
			per := len(w.Values) / w.Shape[0]
			for i := range a.Len() {
				f, err := a.Field(i)
				if err != nil {
					t.Fatal(err)
				}
				if got := reflect.TypeOf(f.Value).String(); got != types[w.DType] {
					t.Errorf("example %d: type %s, want %s", i, got, types[w.DType])
				}
				if !reflect.DeepEqual(f.Shape, w.Shape[1:]) && !(len(f.Shape) == 0 && len(w.Shape) == 1) {
					t.Errorf("example %d: shape %v, want %v", i, f.Shape, w.Shape[1:])
				}
				if got := fieldFloats(t, f); !reflect.DeepEqual(got, w.Values[i*per:(i+1)*per]) {
					t.Errorf("example %d = %v, want %v", i, got, w.Values[i*per:(i+1)*per])
				}
			}
		})
	}
}

// TestSafetensorsDataset: inputs and labels by tensor name, through a
// DataLoader; mismatched lengths and unknown names are refused by name.
func TestSafetensorsDataset(t *testing.T) {
	path := filepath.Join("testdata", "safetensors", "arrays.safetensors")
	ds, err := OpenSafetensorsDataset(path, []string{"f32"}, []string{"labels"})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	if ds.Len() != 4 {
		t.Fatalf("Len = %d, want 4", ds.Len())
	}
	ex, err := ds.Get(2)
	if err != nil {
		t.Fatal(err)
	}
	if got := ex.Inputs[0].Value.([]float32); got[0] != 1.25 || len(got) != 6 {
		t.Errorf("example 2 input = %v, want 6 values from 1.25", got)
	}
	if got := ex.Labels[0].Value.([]int64); !reflect.DeepEqual(got, []int64{4}) {
		t.Errorf("example 2 label = %v, want [4]", got)
	}
	var n int
	for b, err := range (&DataLoader{Dataset: ds, BatchSize: 3, Workers: 2}).Batches(t.Context(), 0, 0) {
		if err != nil {
			t.Fatal(err)
		}
		n += b.Size
	}
	if n != 4 {
		t.Errorf("loader read %d examples, want 4", n)
	}
	for _, c := range []struct {
		inputs, labels []string
		want           string
	}{
		{[]string{"nope"}, nil, `no tensor "nope"; the file has ["bf16" "bool" "f16"`},
		{[]string{"f32"}, []string{"labels", "i8"}, ""},
		{nil, nil, "no tensors named"},
	} {
		_, err := OpenSafetensorsDataset(path, c.inputs, c.labels)
		if c.want == "" {
			if err != nil {
				t.Errorf("%v/%v: %v", c.inputs, c.labels, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%v/%v: error = %v, want one naming %s and %q", c.inputs, c.labels, err, path, c.want)
		}
	}
}

// TestSafetensorsBadFiles: each bad file is refused by an error naming the
// file and the fault.
func TestSafetensorsBadFiles(t *testing.T) {
	short := filepath.Join(t.TempDir(), "short.safetensors")
	if err := os.WriteFile(short, []byte{1, 2, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{filepath.Join("testdata", "safetensors", "bad_truncated.safetensors"), "truncated or padded"},
		{filepath.Join("testdata", "safetensors", "bad_header_json.safetensors"), "bad header: invalid header deserialization"},
		{filepath.Join("testdata", "safetensors", "bad_header_length.safetensors"), "the header length says 1099511627776 bytes"},
		{filepath.Join("testdata", "safetensors", "bad_offsets.safetensors"), "bad header: metadata validation error"},
		{short, "shorter than the 8-byte header length"},
		{filepath.Join("testdata", "safetensors", "missing.safetensors"), "no such file"},
	} {
		_, err := OpenSafetensors(c.path)
		if err == nil || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error = %v, want one naming the file and %q", c.path, err, c.want)
		}
	}
}
