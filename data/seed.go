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
