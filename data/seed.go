package data

import (
	"context"
	"sync/atomic"
)

// defaultSeed is the shuffle seed used by DataLoaders whose Seed is nil when
// the context carries none.
var defaultSeed atomic.Uint64

// SetDefaultSeed sets the shuffle seed used by DataLoaders whose Seed is nil
// when Batches' context carries no seed (see WithSeed), and by Order. It is
// safe for concurrent use; volt.SeedEverything calls it.
func SetDefaultSeed(seed uint64) { defaultSeed.Store(seed) }

// DefaultSeed returns the process-wide default shuffle seed. It is 0 until
// SetDefaultSeed is called.
func DefaultSeed() uint64 { return defaultSeed.Load() }

// seedKey is the context key of WithSeed.
type seedKey struct{}

// WithSeed returns a context that makes DataLoaders whose Seed is nil
// shuffle with seed. A volt.Trainer hands its loaders such a context, so
// that two trainers in one process each use their own seed.
func WithSeed(ctx context.Context, seed uint64) context.Context {
	return context.WithValue(ctx, seedKey{}, seed)
}

// SeedFrom returns the seed ctx carries (see WithSeed), else DefaultSeed():
// the seed a Loader should use when it was given none of its own.
func SeedFrom(ctx context.Context) uint64 {
	if s, ok := ctx.Value(seedKey{}).(uint64); ok {
		return s
	}
	return DefaultSeed()
}

// batchesReadKey is the context key of WithBatchesRead.
type batchesReadKey struct{}

// WithBatchesRead returns a context that tells the DataLoaders whose
// Batches it is given how their caller reads each epoch: at most n batches
// (n < 0: every batch), stopping there without asking for another, as
// Lightning's fit loop reads its training loader (volt.Trainer says so
// for its training loader, n being the limit of LimitTrainBatches). A
// RandomSampler's order then follows torch's there: torch draws the
// sampler's permutations (or chunks of 32 indices) lazily, so an epoch the
// loop read short of the sampler's end leaves the next epoch another order
// than a loop to the end (torch's for loop, and Batches without this
// context) gives.
func WithBatchesRead(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, batchesReadKey{}, n)
}

// batchesRead returns the n of WithBatchesRead and whether ctx has one.
func batchesRead(ctx context.Context) (int, bool) {
	n, ok := ctx.Value(batchesReadKey{}).(int)
	return n, ok
}
