package data

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// BatchSampler groups an epoch's indices into batches: torch's
// batch_sampler= of a DataLoader, over the order the DataLoader's Sampler
// (or Shuffle) chose. Under Devices: N it groups each rank's part of that
// order (as Lightning replaces a batch sampler's inner sampler by a
// distributed one).
type BatchSampler interface {
	// Batches returns the batches of one epoch: groups of the indices of
	// order (each used once, in any order); seed is the loader's.
	Batches(order []int, epoch int, seed uint64) ([][]int, error)
	// NumBatches returns how many batches Batches makes of n indices.
	NumBatches(n int) int
}

// LengthBuckets is a BatchSampler that batches examples of similar length
// together (less padding), torchnlp's BucketBatchSampler: the epoch's
// order is cut into buckets of BatchSize·BucketBatches indices; each bucket
// is sorted by Length (stably, ascending), cut into batches of BatchSize
// (a short last one dropped with DropLast), and its batches are yielded in
// a random order, torch's SubsetRandomSampler over them. Those
// permutations are torch.randperm draws from one torch generator seeded
// with Seed (nil: the loader's) and continued from bucket to bucket and
// epoch to epoch, as torchnlp's from torch's default generator after
// torch.manual_seed(seed).
type LengthBuckets struct {
	// Length returns the sort key (a length) of dataset example index.
	Length func(index int) int
	// BatchSize is the number of examples per batch, >= 1.
	BatchSize int
	// DropLast drops the short last batch of each bucket.
	DropLast bool
	// BucketBatches is the number of batches per bucket (torchnlp's
	// bucket_size_multiplier); 0 means 100.
	BucketBatches int
	// Seed is the generator's seed; nil means the loader's.
	Seed *uint64
}

var _ BatchSampler = LengthBuckets{}

// validate checks the configuration.
func (s LengthBuckets) validate() error {
	var errs []error
	if s.Length == nil {
		errs = append(errs, errors.New("data.LengthBuckets.Length: must be set"))
	}
	if s.BatchSize < 1 {
		errs = append(errs, fmt.Errorf("data.LengthBuckets.BatchSize: must be >= 1, got %d", s.BatchSize))
	}
	if s.BucketBatches < 0 {
		errs = append(errs, fmt.Errorf("data.LengthBuckets.BucketBatches: must be >= 0 (0 = 100), got %d", s.BucketBatches))
	}
	return errors.Join(errs...)
}

// buckets returns the sizes of the buckets of n indices.
func (s LengthBuckets) buckets(n int) []int {
	if n == 0 || s.BatchSize < 1 {
		return nil
	}
	mult := s.BucketBatches
	if mult == 0 {
		mult = 100
	}
	size := min(s.BatchSize*mult, n)
	var out []int
	for start := 0; start < n; start += size {
		out = append(out, min(size, n-start))
	}
	return out
}

// NumBatches implements BatchSampler.
func (s LengthBuckets) NumBatches(n int) int {
	total := 0
	for _, b := range s.buckets(n) {
		total += batchCount(b, s.BatchSize, s.DropLast)
	}
	return total
}

// Batches implements BatchSampler.
func (s LengthBuckets) Batches(order []int, epoch int, seed uint64) ([][]int, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	sizes := s.buckets(len(order))
	perEpoch := 0
	for _, b := range sizes {
		perEpoch += max(batchCount(b, s.BatchSize, s.DropLast)-1, 0)
	}
	g := newTorchGenerator(samplerSeed(s.Seed, seed))
	g.discard(epoch * perEpoch)
	out := make([][]int, 0, s.NumBatches(len(order)))
	start := 0
	for _, size := range sizes {
		bucket := slices.Clone(order[start : start+size])
		start += size
		keys := make([]int, len(bucket))
		for i, idx := range bucket {
			keys[i] = s.Length(idx)
		}
		positions := make([]int, len(bucket))
		for i := range positions {
			positions[i] = i
		}
		slices.SortStableFunc(positions, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
		batches := make([][]int, batchCount(len(bucket), s.BatchSize, s.DropLast))
		for b := range batches {
			batch := positions[b*s.BatchSize : min((b+1)*s.BatchSize, len(positions))]
			batches[b] = make([]int, len(batch))
			for i, p := range batch {
				batches[b][i] = bucket[p]
			}
		}
		for _, p := range g.randperm(len(batches)) {
			out = append(out, batches[p])
		}
	}
	return out, nil
}
