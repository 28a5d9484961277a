package mnist

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"

	"github.com/voltml/volt/data"
)

// load loads MNIST or fails the test.
func load(t testing.TB) (train, test *Dataset) {
	t.Helper()
	train, test, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return train, test
}

func TestLoad(t *testing.T) {
	train, test := load(t)
	tests := []struct {
		name       string
		ds         *Dataset
		wantLen    int
		wantLabels []int32 // first labels
	}{
		{"train", train, 60000, []int32{5, 0, 4, 1, 9}},
		{"test", test, 10000, []int32{7, 2, 1, 0, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.ds.Len() != tc.wantLen {
				t.Fatalf("Len() = %d, want %d", tc.ds.Len(), tc.wantLen)
			}
			for i, want := range tc.wantLabels {
				ex, err := tc.ds.Get(i)
				if err != nil {
					t.Fatal(err)
				}
				if got := ex.Labels[0].Value.(int32); got != want {
					t.Errorf("label %d = %d, want %d", i, got, want)
				}
			}
			// Pixel range and label histogram over the whole split.
			var counts [NumClasses]int
			minPix, maxPix := float32(1), float32(0)
			for i := range tc.ds.Len() {
				ex, err := tc.ds.Get(i)
				if err != nil {
					t.Fatal(err)
				}
				img := ex.Inputs[0].Value.([]float32)
				if len(img) != ImageSize {
					t.Fatalf("image %d has %d pixels, want %d", i, len(img), ImageSize)
				}
				minPix = min(minPix, slices.Min(img))
				maxPix = max(maxPix, slices.Max(img))
				counts[ex.Labels[0].Value.(int32)]++
			}
			if minPix != 0 || maxPix != 1 {
				t.Errorf("pixel range [%g, %g], want [0, 1]", minPix, maxPix)
			}
			for digit, c := range counts {
				if c < tc.wantLen/20 {
					t.Errorf("digit %d appears %d times, suspiciously few", digit, c)
				}
			}
		})
	}
}

func TestLoadIsCached(t *testing.T) {
	train1, _ := load(t)
	train2, _ := load(t)
	if &train1.pixels[0] != &train2.pixels[0] {
		t.Error("second Load did not reuse the cached data")
	}
}

func TestGetAndGetBatchAgree(t *testing.T) {
	train, _ := load(t)
	sub := train.Subset(100, 200)
	tests := []struct {
		name string
		ds   *Dataset
		idx  []int
	}{
		{"single", train, []int{0}},
		{"unordered with repeats", train, []int{59999, 3, 3, 12345, 0}},
		{"subset", sub, []int{0, 99, 50}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.ds.GetBatch(tc.idx)
			if err != nil {
				t.Fatal(err)
			}
			examples := make([]data.Example, len(tc.idx))
			for k, i := range tc.idx {
				if examples[k], err = tc.ds.Get(i); err != nil {
					t.Fatal(err)
				}
			}
			want, err := data.DefaultCollate(examples)
			if err != nil {
				t.Fatal(err)
			}
			if b.Size != len(tc.idx) {
				t.Errorf("Size = %d, want %d", b.Size, len(tc.idx))
			}
			for _, pair := range [][2]*tensors.Tensor{{b.Inputs[0], want.Inputs[0]}, {b.Labels[0], want.Labels[0]}} {
				if !pair[0].Shape().Equal(pair[1].Shape()) {
					t.Errorf("GetBatch shape %s, Get+DefaultCollate shape %s", pair[0].Shape(), pair[1].Shape())
				}
				if !pair[0].Equal(pair[1]) {
					t.Errorf("GetBatch and Get+DefaultCollate differ for %s", pair[0].Shape())
				}
			}
		})
	}
}

func TestIndexErrors(t *testing.T) {
	train, _ := load(t)
	sub := train.Subset(10, 20)
	tests := []struct {
		name    string
		call    func() error
		wantErr string
	}{
		{"Get negative", func() error { _, err := train.Get(-1); return err }, "index -1 out of range [0, 60000)"},
		{"Get too large", func() error { _, err := train.Get(60000); return err }, "index 60000 out of range"},
		{"Get past subset", func() error { _, err := sub.Get(10); return err }, "index 10 out of range [0, 10)"},
		{"GetBatch bad index", func() error { _, err := sub.GetBatch([]int{0, 10}); return err }, "index 10"},
		{"GetBatch empty", func() error { _, err := sub.GetBatch(nil); return err }, "no indices"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestSubset(t *testing.T) {
	train, _ := load(t)
	tests := []struct {
		name      string
		from, to  int
		wantLen   int
		wantPanic bool
	}{
		{"train split", 0, 55000, 55000, false},
		{"validation split", 55000, 60000, 5000, false},
		{"empty", 7, 7, 0, false},
		{"whole", 0, 60000, 60000, false},
		{"negative from", -1, 10, 0, true},
		{"to past end", 59000, 60001, 0, true},
		{"to before from", 10, 5, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if (r != nil) != tc.wantPanic {
					t.Fatalf("panic = %v, want panic %v", r, tc.wantPanic)
				}
				if r != nil && !strings.Contains(fmt.Sprint(r), "mnist.Dataset.Subset: range") {
					t.Errorf("panic message %q does not describe the range", r)
				}
			}()
			sub := train.Subset(tc.from, tc.to)
			if sub.Len() != tc.wantLen {
				t.Fatalf("Len() = %d, want %d", sub.Len(), tc.wantLen)
			}
			if tc.wantLen == 0 {
				return
			}
			// First and last examples of the subset are those of train.
			for _, i := range []int{0, tc.wantLen - 1} {
				got, _ := sub.Get(i)
				want, _ := train.Get(tc.from + i)
				if !slices.Equal(got.Inputs[0].Value.([]float32), want.Inputs[0].Value.([]float32)) ||
					got.Labels[0].Value != want.Labels[0].Value {
					t.Errorf("Subset example %d differs from train example %d", i, tc.from+i)
				}
			}
		})
	}
	// Nested subsets compose.
	nested := train.Subset(100, 1000).Subset(10, 20)
	a, _ := nested.Get(0)
	b, _ := train.Get(110)
	if a.Labels[0].Value != b.Labels[0].Value {
		t.Error("nested Subset does not offset correctly")
	}
}

func TestWithDataLoader(t *testing.T) {
	train, _ := load(t)
	seed := uint64(1)
	l := &data.DataLoader{Dataset: train.Subset(0, 1000), BatchSize: 64, Shuffle: true, Seed: &seed, Workers: 2}
	n := 0
	for b, err := range l.Batches(context.Background(), 0, 0) {
		if err != nil {
			t.Fatal(err)
		}
		n += b.Size
	}
	if n != 1000 || l.NumBatches() != 16 {
		t.Errorf("got %d examples in %d batches, want 1000 in 16", n, l.NumBatches())
	}
}

func BenchmarkGetBatch64(b *testing.B) {
	train, _ := load(b)
	idx := make([]int, 64)
	for i := range idx {
		idx[i] = (i * 937) % train.Len()
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := train.GetBatch(idx); err != nil {
			b.Fatal(err)
		}
	}
}
