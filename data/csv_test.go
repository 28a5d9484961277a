package data

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeCSV writes text to a file in a temporary directory and returns its
// path.
func writeCSV(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data.csv")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadCSV: the selected columns, in the order asked, of every data
// row; header or not, int or float labels, quoted cells.
func TestReadCSV(t *testing.T) {
	for _, tc := range []struct {
		name       string
		text       string
		opts       CSVOptions
		wantInputs [][]float32
		wantLabels []any
	}{
		{"header, float labels", "a,b,y\n1,2,0.5\n3, 4 ,-1e2\n", CSVOptions{Inputs: []string{"b", "a"}, Labels: []string{"y"}},
			[][]float32{{2, 1}, {4, 3}}, []any{[]float32{0.5}, []float32{-100}}},
		{"int label", "x,class\n0.25,2\n\"1.5\",0\n", CSVOptions{Inputs: []string{"x"}, Labels: []string{"class"}, IntLabels: true},
			[][]float32{{0.25}, {1.5}}, []any{int32(2), int32(0)}},
		{"no header, semicolons", "1;2;3\n4;5;6\n", CSVOptions{NoHeader: true, Inputs: []string{"0", "2"}, Labels: []string{"1", "0"}, IntLabels: true, Comma: ';'},
			[][]float32{{1, 3}, {4, 6}}, []any{[]int32{2, 1}, []int32{5, 4}}},
		{"no labels", "p\nNaN\n", CSVOptions{Inputs: []string{"p"}}, nil, []any{nil}},
		// A UTF-8 byte-order mark (Excel's "CSV UTF-8") is no part of the first column's name or value.
		{"byte-order mark, header", "\ufeffa,y\n1,2\n", CSVOptions{Inputs: []string{"a"}, Labels: []string{"y"}, IntLabels: true},
			[][]float32{{1}}, []any{int32(2)}},
		{"byte-order mark, no header", "\ufeff7,2\n", CSVOptions{NoHeader: true, Inputs: []string{"0"}, Labels: []string{"1"}, IntLabels: true},
			[][]float32{{7}}, []any{int32(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := ReadCSV(writeCSV(t, tc.text), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if ds.Len() != len(tc.wantLabels) {
				t.Fatalf("%d examples, want %d", ds.Len(), len(tc.wantLabels))
			}
			for i := range ds.Len() {
				ex, err := ds.Get(i)
				if err != nil {
					t.Fatal(err)
				}
				if tc.wantInputs != nil && !reflect.DeepEqual(ex.Inputs[0].Value, tc.wantInputs[i]) {
					t.Errorf("example %d inputs %v, want %v", i, ex.Inputs[0].Value, tc.wantInputs[i])
				}
				var label any
				if len(ex.Labels) > 0 {
					label = ex.Labels[0].Value
				}
				if !reflect.DeepEqual(label, tc.wantLabels[i]) {
					t.Errorf("example %d label %#v, want %#v", i, label, tc.wantLabels[i])
				}
			}
		})
	}
}

// TestReadCSVBadFiles: each bad file or option is an error naming the
// file and, for a cell, its line and column.
func TestReadCSVBadFiles(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		opts       CSVOptions
		want       string
	}{
		{"bad cell", "a,b\n1,2\n3,x7\n", CSVOptions{Inputs: []string{"a", "b"}}, `:3:3: column "b" (number 1): "x7" is not a float32 number`},
		{"empty cell", "a,b\n1,\n", CSVOptions{Inputs: []string{"b"}}, `:2:3: column "b" (number 1): "" is not a float32 number`},
		{"bad int label", "a,y\n1,2.5\n", CSVOptions{Inputs: []string{"a"}, Labels: []string{"y"}, IntLabels: true}, `:2:3: column "y" (number 1): "2.5" is not an int32 label`},
		{"unknown column", "a,b\n1,2\n", CSVOptions{Inputs: []string{"c"}}, `CSVOptions.Inputs[0]: no column "c"; the columns are ["a" "b"]`},
		{"short row", "a,b\n1,2\n3\n", CSVOptions{Inputs: []string{"a"}}, "record on line 3: wrong number of fields"},
		{"bad quote", "a\n\"1\n", CSVOptions{Inputs: []string{"a"}}, "extraneous or missing \" in quoted-field"},
		{"empty file", "", CSVOptions{Inputs: []string{"a"}}, "the file is empty"},
		{"no inputs", "a\n1\n", CSVOptions{}, "CSVOptions.Inputs: select at least one input column"},
		{"class out of range", "a,y\n1,2\n2,3\n", CSVOptions{Inputs: []string{"a"}, Labels: []string{"y"}, IntLabels: true, NumClasses: 3},
			`:3:3: column "y" (number 1): class 3 is out of range for CSVOptions.NumClasses 3 (valid classes: 0 to 2)`},
		{"negative class", "a,y\n1,-1\n", CSVOptions{Inputs: []string{"a"}, Labels: []string{"y"}, IntLabels: true, NumClasses: 3},
			`:2:3: column "y" (number 1): class -1 is out of range for CSVOptions.NumClasses 3`},
		{"classes without int labels", "a,y\n1,1\n", CSVOptions{Inputs: []string{"a"}, Labels: []string{"y"}, NumClasses: 3},
			"CSVOptions.NumClasses: 3 needs IntLabels (class indices)"},
		{"negative class count", "a,y\n1,1\n", CSVOptions{Inputs: []string{"a"}, Labels: []string{"y"}, IntLabels: true, NumClasses: -2},
			"CSVOptions.NumClasses: -2; want the number of classes (0: not checked)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeCSV(t, tc.text)
			_, err := ReadCSV(path, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) || (!strings.HasPrefix(tc.want, "CSVOptions.") && !strings.Contains(err.Error(), path)) {
				t.Errorf("error = %v, want one naming %s and %q", err, path, tc.want)
			}
		})
	}
}
