package data

import (
	"context"
	"fmt"
	"iter"
	"sync/atomic"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
)

// numberedExample returns example i: inputs [i, i+0.5] (float32) and label i (int32).
func numberedExample(i int) Example {
	return Example{
		Inputs: []Field{{Value: []float32{float32(i), float32(i) + 0.5}}},
		Labels: []Field{{Value: int32(i)}},
	}
}

// numbered returns a Slice of n numbered examples.
func numbered(n int) Slice {
	s := make(Slice, n)
	for i := range s {
		s[i] = numberedExample(i)
	}
	return s
}

// labelsOf returns the int32 labels of a batch (the example indices for numbered datasets).
func labelsOf(t *testing.T, b *Batch) []int32 {
	t.Helper()
	return tensors.MustCopyFlatData[int32](b.Labels[0])
}

// flatOf returns the flat data of every tensor of a batch, for comparisons.
func flatOf(b *Batch) []any {
	var out []any
	for _, ts := range [][]*tensors.Tensor{b.Inputs, b.Labels} {
		for _, t := range ts {
			out = append(out, t.Shape().String(), fmt.Sprint(t.Value()))
		}
	}
	return out
}

// collectAll ranges over one epoch and returns the batches, failing on error.
func collectAll(t *testing.T, l Loader, epoch, skip int) []*Batch {
	t.Helper()
	var out []*Batch
	for b, err := range l.Batches(context.Background(), epoch, skip) {
		if err != nil {
			t.Fatalf("Batches(epoch=%d, skip=%d): unexpected error: %v", epoch, skip, err)
		}
		out = append(out, b)
	}
	return out
}

// collectLabels ranges over one epoch and returns the labels of each batch.
func collectLabels(t *testing.T, l Loader, epoch, skip int) [][]int32 {
	t.Helper()
	var out [][]int32
	for _, b := range collectAll(t, l, epoch, skip) {
		out = append(out, labelsOf(t, b))
	}
	return out
}

// countingDataset counts Get calls and optionally fails at one index.
type countingDataset struct {
	Slice
	gets   atomic.Int64
	failAt int // -1 for never
}

// Get implements Dataset.
func (d *countingDataset) Get(i int) (Example, error) {
	d.gets.Add(1)
	if i == d.failAt {
		return Example{}, fmt.Errorf("broken example")
	}
	return d.Slice.Get(i)
}

// batchGetterDataset is a numbered dataset with a BatchGetter fast path that
// records its calls; its Get always fails, to prove it is not used.
type batchGetterDataset struct {
	n     int
	calls atomic.Int64
}

// Len implements Dataset.
func (d *batchGetterDataset) Len() int { return d.n }

// Get implements Dataset.
func (d *batchGetterDataset) Get(i int) (Example, error) {
	return Example{}, fmt.Errorf("Get(%d) must not be called when GetBatch exists", i)
}

// GetBatch implements BatchGetter.
func (d *batchGetterDataset) GetBatch(indices []int) (*Batch, error) {
	d.calls.Add(1)
	examples := make([]Example, len(indices))
	for i, idx := range indices {
		examples[i] = numberedExample(idx)
	}
	return DefaultCollate(examples)
}

// streamDataset is an IterableDataset of n numbered examples (offset by
// 1000*epoch), failing at example failAt (-1 for never).
type streamDataset struct {
	n, failAt int
	active    atomic.Int64 // running Iter calls
}

// Iter implements IterableDataset.
func (d *streamDataset) Iter(epoch int) iter.Seq2[Example, error] {
	return func(yield func(Example, error) bool) {
		d.active.Add(1)
		defer d.active.Add(-1)
		for i := range d.n {
			if i == d.failAt {
				yield(Example{}, fmt.Errorf("stream broke"))
				return
			}
			if !yield(numberedExample(1000*epoch+i), nil) {
				return
			}
		}
	}
}
