package data

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// npyExpected is testdata/npy/expected.json (gen_npy.py): each fixture's
// shape and values in C order.
type npyExpected map[string]struct {
	Shape  []int
	Values []float64
}

// fieldFloats returns a field's values as float64.
func fieldFloats(t *testing.T, f Field) []float64 {
	t.Helper()
	rv := reflect.ValueOf(f.Value)
	out := make([]float64, rv.Len())
	for i := range out {
		switch x := rv.Index(i).Interface().(type) {
		case bool:
			if x {
				out[i] = 1
			}
		case uint8:
			out[i] = float64(x)
		case int32:
			out[i] = float64(x)
		case int64:
			out[i] = float64(x)
		case float32:
			out[i] = float64(x)
		case float64:
			out[i] = x
		default:
			t.Fatalf("unexpected element type %T", x)
		}
	}
	return out
}

// TestNPYMatchesNumpy: every fixture numpy wrote reads back as numpy's
// values, example by example, with the Field type that holds its dtype.
func TestNPYMatchesNumpy(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "npy", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want npyExpected
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	types := map[string]string{"b1": "[]bool", "u1": "[]uint8", "i1": "[]int32", "i2": "[]int32", "u2": "[]int32", "i4": "[]int32",
		"u4": "[]int64", "i8": "[]int64", "u8": "[]int64", "f2": "[]float32", "f4": "[]float32", "f8": "[]float64"}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			a, err := OpenNPY(filepath.Join("testdata", "npy", name+".npy"))
			if name == "u8_large" {
				// Opens; the example over 2^63-1 is refused by name.
				if err != nil {
					t.Fatal(err)
				}
				defer a.Close()
				_, err := a.Field(0)
				if err == nil || !strings.Contains(err.Error(), "example 0, element 0: uint64 9223372036854775813 does not fit in int64") {
					t.Errorf("error = %v", err)
				}
				if f, err := a.Field(1); err != nil || !reflect.DeepEqual(f.Value, []int64{1}) {
					t.Errorf("example 1 = %v, %v; want [1]", f.Value, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if !reflect.DeepEqual(a.Shape, w.Shape) {
				t.Fatalf("shape %v, numpy's %v", a.Shape, w.Shape)
			}
			per := len(w.Values) / a.Len()
			for i := range a.Len() {
				f, err := a.Field(i)
				if err != nil {
					t.Fatal(err)
				}
				if got := fieldFloats(t, f); !reflect.DeepEqual(got, w.Values[i*per:(i+1)*per]) {
					t.Errorf("example %d = %v, numpy's %v", i, got, w.Values[i*per:(i+1)*per])
				}
				if !reflect.DeepEqual(f.Shape, w.Shape[1:]) {
					t.Errorf("example %d shape %v, want %v", i, f.Shape, w.Shape[1:])
				}
				if wt, ok := types[name[:2]]; ok && fmt.Sprintf("%T", f.Value) != wt {
					t.Errorf("field type %T, want %s", f.Value, wt)
				}
			}
		})
	}
}

// TestNPYBadFiles: a bad file is refused when opened, naming the file and
// what is wrong.
func TestNPYBadFiles(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"bad_truncated", "truncated: shape [4 3 2] of <f4 needs 96 bytes of data, the file has 86 after its header"},
		{"bad_magic", `not a .npy file: it starts with "PK\x03\x04PY"`},
		{"bad_complex", `dtype "<c8" has no volt field type`},
		{"bad_structured", "structured dtypes (a list of fields) are not supported"},
		{"bad_object", `dtype "|O" is not a numeric dtype`},
		{"bad_scalar", "a 0-d array has no example axis"},
		{"missing", "no such file"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "npy", tc.file+".npy")
			a, err := OpenNPY(path)
			if err == nil {
				a.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error = %v, want one naming %s and %q", err, path, tc.want)
			}
		})
	}
}

// TestNPYDataset: a DataLoader over .npy inputs and labels batches their
// rows; files of different lengths are refused by name.
func TestNPYDataset(t *testing.T) {
	dir := filepath.Join("testdata", "npy")
	ds, err := OpenNPYDataset([]string{filepath.Join(dir, "f4.npy"), filepath.Join(dir, "b1.npy")}, []string{filepath.Join(dir, "i8.npy")})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	batches := collectAll(t, &DataLoader{Dataset: ds, BatchSize: 3}, 0, 0)
	if len(batches) != 2 || batches[0].Inputs[0].Shape().String() != "(Float32)[3, 3, 2]" || batches[1].Labels[0].Shape().String() != "(Int64)[1, 3, 2]" {
		t.Errorf("%d batches, shapes %s and %s; want 2, (Float32)[3, 3, 2] and (Int64)[1, 3, 2]", len(batches), batches[0].Inputs[0].Shape(), batches[len(batches)-1].Labels[0].Shape())
	}
	_, err = OpenNPYDataset([]string{filepath.Join(dir, "f4.npy")}, []string{filepath.Join(dir, "i4_vector.npy")})
	if err == nil || !strings.Contains(err.Error(), "i4_vector.npy has 5 examples") {
		t.Errorf("error = %v, want the lengths named", err)
	}
}
