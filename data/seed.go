package data

import "sync/atomic"

// defaultSeed is the shuffle seed used by DataLoaders whose Seed is nil.
var defaultSeed atomic.Uint64

// SetDefaultSeed sets the shuffle seed used by DataLoaders whose Seed is nil
// (read when Batches or Order is called). It is safe for concurrent use;
// volt.SeedEverything calls it.
func SetDefaultSeed(seed uint64) { defaultSeed.Store(seed) }

// DefaultSeed returns the shuffle seed used by DataLoaders whose Seed is nil.
// It is 0 until SetDefaultSeed is called.
func DefaultSeed() uint64 { return defaultSeed.Load() }
