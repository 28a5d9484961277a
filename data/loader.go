package data

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
)

// Loader is what the trainer consumes: a source of batches, epoch by epoch.
type Loader interface {
	// NumBatches returns the number of batches per epoch, or -1 when unknown
	// (iterable dataset).
	NumBatches() int

	// Batches yields the batches of one epoch in order, starting at batch
	// index skip (used for mid-epoch resume: it produces exactly the batches
	// that a full pass would yield from index skip on, without collating the
	// skipped ones for map-style datasets). It stops early, without leaking
	// goroutines, when the consumer breaks or ctx is done (yielding the ctx
	// error then).
	Batches(ctx context.Context, epoch, skip int) iter.Seq2[*Batch, error]
}

// DataLoader is the standard Loader: it batches a map-style Dataset
// (optionally shuffled) or an IterableDataset, collating batches inline or on
// a pool of worker goroutines.
type DataLoader struct {
	// Dataset is a map-style dataset. Exactly one of Dataset and Iterable
	// must be set.
	Dataset Dataset
	// Iterable is an iterable dataset. Exactly one of Dataset and Iterable
	// must be set.
	Iterable IterableDataset
	// BatchSize is the number of examples per batch, >= 1; 0 means 1
	// (PyTorch's default).
	BatchSize int
	// Shuffle permutes the examples each epoch; map-style Dataset only.
	Shuffle bool
	// Sampler chooses the indices of each epoch (torch's sampler=; see
	// RandomSampler, WeightedRandomSampler, SubsetRandomSampler); nil reads
	// 0..Len()-1, or a permutation with Shuffle. Map-style Dataset only,
	// and not with Shuffle.
	Sampler Sampler
	// BatchSampler groups each epoch's indices (the Sampler's, Shuffle's or
	// 0..Len()-1) into batches (torch's batch_sampler=; see LengthBuckets);
	// nil cuts them into batches of BatchSize, DropLast dropping a short
	// last one. With a BatchSampler, BatchSize must be 0 and DropLast
	// false, as in torch. Map-style Dataset only.
	BatchSampler BatchSampler
	// Seed is the shuffle seed; nil means the seed of Batches' context
	// (SeedFrom: the trainer's seed when a volt.Trainer runs the loader,
	// else DefaultSeed() at the time Batches or Order is called).
	Seed *uint64
	// DropLast drops the final batch of an epoch when it is incomplete.
	DropLast bool
	// Workers is the number of goroutines building batches in parallel; 0
	// builds them inline on the consumer goroutine. The order and contents
	// of batches do not depend on Workers.
	Workers int
	// Prefetch is the number of batches prepared ahead when Workers > 0;
	// 0 means 2*max(1, Workers).
	Prefetch int
	// Collate turns examples into a batch; nil means DefaultCollate. It is
	// not used for a Dataset that implements BatchGetter.
	Collate Collator
}

var _ Loader = (*DataLoader)(nil)

// Validate checks the configuration and returns an error naming every bad
// field, or nil.
func (l *DataLoader) Validate() error {
	var errs []error
	switch {
	case l.Dataset == nil && l.Iterable == nil:
		errs = append(errs, errors.New("data.DataLoader.Dataset/Iterable: exactly one must be set, got neither"))
	case l.Dataset != nil && l.Iterable != nil:
		errs = append(errs, errors.New("data.DataLoader.Dataset/Iterable: exactly one must be set, got both"))
	}
	switch {
	case l.BatchSampler != nil && (l.BatchSize != 0 || l.DropLast):
		errs = append(errs, fmt.Errorf("data.DataLoader.BatchSize/DropLast: must be 0/false with a BatchSampler, which makes the batches; got %d/%v",
			l.BatchSize, l.DropLast))
	case l.BatchSampler == nil && l.batchSize() < 1:
		errs = append(errs, fmt.Errorf("data.DataLoader.BatchSize: must be >= 1 (0 means 1), got %d", l.BatchSize))
	}
	if l.Shuffle && l.Iterable != nil {
		errs = append(errs, errors.New("data.DataLoader.Shuffle: only valid with a map-style Dataset, "+
			"must be false with Iterable"))
	}
	if l.Sampler != nil && l.Iterable != nil {
		errs = append(errs, errors.New("data.DataLoader.Sampler: only valid with a map-style Dataset, must be nil with Iterable"))
	}
	if l.BatchSampler != nil && l.Iterable != nil {
		errs = append(errs, errors.New("data.DataLoader.BatchSampler: only valid with a map-style Dataset, must be nil with Iterable"))
	}
	if l.Sampler != nil && l.Shuffle {
		errs = append(errs, errors.New("data.DataLoader.Shuffle: must be false with a Sampler, which chooses the order (as in torch)"))
	}
	// A sampler that checks its fields against the dataset does so now,
	// before an epoch asks it for indices (an empty one would make an
	// epoch of no batches).
	if v, ok := l.Sampler.(interface{ validate(n int) error }); ok && l.Dataset != nil {
		if err := v.validate(l.Dataset.Len()); err != nil {
			errs = append(errs, fmt.Errorf("data.DataLoader.Sampler: %w", err))
		}
	}
	if l.Workers < 0 {
		errs = append(errs, fmt.Errorf("data.DataLoader.Workers: must be >= 0 (0 = inline), got %d", l.Workers))
	}
	if l.Prefetch < 0 {
		errs = append(errs, fmt.Errorf("data.DataLoader.Prefetch: must be >= 0 (0 = 2*max(1,Workers)), got %d",
			l.Prefetch))
	}
	return errors.Join(errs...)
}

// batchSize returns BatchSize, 1 when it is 0.
func (l *DataLoader) batchSize() int {
	if l.BatchSize == 0 {
		return 1
	}
	return l.BatchSize
}

// NumBatches returns the number of batches per epoch: -1 for an Iterable
// dataset, 0 when there is no Dataset or BatchSize < 1.
func (l *DataLoader) NumBatches() int {
	if l.Iterable != nil {
		return -1
	}
	if l.Dataset == nil || (l.batchSize() < 1 && l.BatchSampler == nil) {
		return 0
	}
	return l.batchesOf(l.samples())
}

// samples returns the number of indices of an epoch: the Sampler's, else
// the dataset's length.
func (l *DataLoader) samples() int {
	if l.Sampler != nil {
		return l.Sampler.Len(l.Dataset.Len())
	}
	return l.Dataset.Len()
}

// batchesOf returns the number of batches an epoch of n indices makes.
func (l *DataLoader) batchesOf(n int) int {
	if l.BatchSampler != nil {
		return l.BatchSampler.NumBatches(n)
	}
	return batchCount(n, l.batchSize(), l.DropLast)
}

// batchCount returns the number of batches of size batchSize (>= 1) that n
// examples make, the last one partial unless dropLast.
func batchCount(n, batchSize int, dropLast bool) int {
	if dropLast {
		return n / batchSize
	}
	return (n + batchSize - 1) / batchSize
}

// Order returns the example indices of an epoch, in the order they are
// batched: 0..Len()-1, or, with Shuffle, a permutation that is a
// deterministic function of (seed, epoch) (a Fisher-Yates shuffle driven by
// math/rand/v2's PCG seeded with (seed, epoch)), or the Sampler's indices.
// It returns nil for an Iterable dataset or a Sampler that fails (Batches
// yields its error).
func (l *DataLoader) Order(epoch int) []int {
	order, err := l.orderOf(epoch, l.seed())
	if err != nil {
		return nil
	}
	return order
}

// orderOf returns the indices of epoch for seed: the Sampler's, else order's.
func (l *DataLoader) orderOf(epoch int, seed uint64) ([]int, error) {
	if l.Sampler != nil && l.Dataset != nil {
		order, err := l.Sampler.Indices(l.Dataset.Len(), epoch, seed)
		if err != nil {
			return nil, fmt.Errorf("data.DataLoader.Sampler: epoch %d: %w", epoch, err)
		}
		return order, nil
	}
	return l.order(epoch, seed), nil
}

// orderRead is orderOf for a Batches call with ctx: a RandomSampler's
// indices as torch's DataLoader yields them to a loop that reads each epoch
// as ctx says (WithBatchesRead), else to its end.
func (l *DataLoader) orderRead(ctx context.Context, epoch int, seed uint64) ([]int, error) {
	rs, ok := l.Sampler.(RandomSampler)
	if p, isPtr := l.Sampler.(*RandomSampler); isPtr && p != nil {
		rs, ok = *p, true
	}
	limit, told := batchesRead(ctx)
	if !ok || !told || l.Dataset == nil || l.BatchSampler != nil {
		return l.orderOf(epoch, seed)
	}
	n := l.Dataset.Len()
	order, err := rs.indicesRead(n, epoch, seed, l.epochRead(rs.numSamples(n), limit))
	if err != nil {
		return nil, fmt.Errorf("data.DataLoader.Sampler: epoch %d: %w", epoch, err)
	}
	return order, nil
}

// epochRead is how far torch's BatchSampler reads an epoch's k sampler
// indices for a loop that takes at most limit batches (limit < 0: all)
// and asks for no other: whole batches of them, and past the end only to
// build a short last batch (not with DropLast).
func (l *DataLoader) epochRead(k, limit int) epochRead {
	b := l.batchSize()
	all := batchCount(k, b, l.DropLast)
	batches := all
	if limit >= 0 {
		batches = min(all, limit)
	}
	return epochRead{count: min(batches*b, k), past: !l.DropLast && k%b != 0 && batches == all}
}

// seed returns the effective shuffle seed outside Batches.
func (l *DataLoader) seed() uint64 { return l.seedFor(context.Background()) }

// seedFor returns the effective shuffle seed of a Batches call with ctx.
func (l *DataLoader) seedFor(ctx context.Context) uint64 {
	if l.Seed != nil {
		return *l.Seed
	}
	return SeedFrom(ctx)
}

// order implements Order with an explicit seed.
func (l *DataLoader) order(epoch int, seed uint64) []int {
	if l.Dataset == nil {
		return nil
	}
	n := l.Dataset.Len()
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	if l.Shuffle {
		r := rand.New(rand.NewPCG(seed, uint64(epoch)))
		for i := n - 1; i > 0; i-- {
			j := r.IntN(i + 1)
			idx[i], idx[j] = idx[j], idx[i]
		}
	}
	return idx
}

// collator returns the effective Collator.
func (l *DataLoader) collator() Collator {
	if l.Collate != nil {
		return l.Collate
	}
	return DefaultCollate
}

// prefetch returns the effective Prefetch.
func (l *DataLoader) prefetch() int {
	if l.Prefetch > 0 {
		return l.Prefetch
	}
	return 2 * max(1, l.Workers)
}
