package data_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/voltml/volt/data"
)

// TestRows: Rows pairs inputs[i] with labels[i] as one example each, and
// refuses mismatched lengths and ragged rows naming the row.
func TestRows(t *testing.T) {
	xs := [][]float32{{1, 2}, {3, 4}, {5, 6}}
	ys := []int32{0, 1, 1}
	got, err := data.Rows(xs, ys)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d examples, want 3", len(got))
	}
	for i, ex := range got {
		want := data.Example{Inputs: []data.Field{{Value: xs[i]}}, Labels: []data.Field{{Value: ys[i]}}}
		if !reflect.DeepEqual(ex, want) {
			t.Errorf("example %d = %+v, want %+v", i, ex, want)
		}
	}
	// A loader batches them as it batches hand-written examples.
	var n int
	for b, err := range (&data.DataLoader{Dataset: got, BatchSize: 3}).Batches(t.Context(), 0, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if dims := b.Inputs[0].Shape().Dimensions; !reflect.DeepEqual(dims, []int{3, 2}) {
			t.Errorf("input batch shape %v, want [3 2]", dims)
		}
		n++
	}
	if n != 1 {
		t.Errorf("%d batches, want 1", n)
	}

	for _, tc := range []struct {
		name string
		err  func() error
		says string
	}{
		{"lengths", func() error { _, err := data.Rows(xs, ys[:2]); return err }, "3 inputs and 2 labels"},
		{"ragged input", func() error { _, err := data.Rows([][]float32{{1, 2}, {3}}, []float32{0, 1}); return err },
			"inputs[1] has shape [1], inputs[0] [2]"},
		{"ragged label", func() error { _, err := data.Rows([]float32{1, 2}, [][]float64{{1}, {2, 3}}); return err },
			"labels[1] has shape [2], labels[0] [1]"},
	} {
		if err := tc.err(); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.says)
		}
	}
}
