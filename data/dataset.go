package data

import (
	"fmt"
	"iter"
)

// Dataset is a map-style dataset: a fixed number of examples addressable by
// index in [0, Len()).
type Dataset interface {
	// Len returns the number of examples.
	Len() int
	// Get returns example i, 0 <= i < Len().
	Get(i int) (Example, error)
}

// BatchGetter is an optional fast path of a Dataset: it builds a whole batch
// at once. The DataLoader uses it, when the Dataset implements it, instead of
// Get + Collate.
type BatchGetter interface {
	// GetBatch returns the batch made of the examples at the given indices, in
	// that order.
	GetBatch(indices []int) (*Batch, error)
}

// SeededDataset is an optional interface of a Dataset whose examples are
// random (augmentation): the DataLoader calls GetSeeded, on whichever
// worker builds the batch, with the epoch and the loader's seed, so an
// example is a pure function of (seed, epoch, index) — the same for any
// Workers and on a mid-epoch resume. See ImageFolder.
type SeededDataset interface {
	Dataset
	// GetSeeded returns example i of the given epoch, drawing any
	// randomness from (seed, epoch, i) only.
	GetSeeded(i, epoch int, seed uint64) (Example, error)
}

// IterableDataset is a dataset without a known length: Iter yields the
// examples of one pass. The epoch is given so the dataset can reseed any
// randomness it uses.
type IterableDataset interface {
	// Iter yields the examples of one epoch. A non-nil error ends the epoch.
	Iter(epoch int) iter.Seq2[Example, error]
}

// Slice is a map-style Dataset over a []Example, handy for tests and small
// in-memory datasets.
type Slice []Example

// Len returns the number of examples.
func (s Slice) Len() int { return len(s) }

// Get returns example i, or an error when i is out of range.
func (s Slice) Get(i int) (Example, error) {
	if i < 0 || i >= len(s) {
		return Example{}, fmt.Errorf("data.Slice.Get: index %d out of range [0, %d)", i, len(s))
	}
	return s[i], nil
}

// Func adapts a length and a function to a Dataset. The returned dataset
// checks that indices are in [0, n) before calling get.
func Func(n int, get func(i int) (Example, error)) Dataset {
	return funcDataset{n: n, get: get}
}

// funcDataset is the Dataset returned by Func.
type funcDataset struct {
	n   int
	get func(i int) (Example, error)
}

// Len implements Dataset.
func (f funcDataset) Len() int { return f.n }

// Get implements Dataset.
func (f funcDataset) Get(i int) (Example, error) {
	if i < 0 || i >= f.n {
		return Example{}, fmt.Errorf("data.Func.Get: index %d out of range [0, %d)", i, f.n)
	}
	return f.get(i)
}
