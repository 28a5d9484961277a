package data

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
)

// ShardUnion is the Loader one process uses to reproduce, step for step, a
// data-parallel run of Replicas ranks that each read a Sharded loader over
// Loader: its batch k is the concatenation, in rank order, of every rank's
// batch k (so Replicas·BatchSize samples, the last batch possibly smaller).
// With mean-reduced gradients and equal per-rank batch sizes, training on
// it matches the Replicas-rank run up to float rounding (Lightning's DDP
// goldens: within 2.4e-7). Uneven must be PadRepeat or DropTail: KeepUneven
// shards may have different batch counts and have no such equivalent.
type ShardUnion struct {
	// Loader is the loader the ranks share.
	Loader *DataLoader
	// Replicas is the number of ranks reproduced, >= 1.
	Replicas int
	// Uneven is the ranks' policy for a length that is not a multiple of
	// Replicas: PadRepeat (the zero value) or DropTail.
	Uneven Uneven
}

var _ Loader = (*ShardUnion)(nil)

// Validate checks the configuration and returns an error naming every bad
// field, or nil.
func (u *ShardUnion) Validate() error {
	if u.Loader != nil && u.Loader.BatchSampler != nil {
		return errors.New("data.ShardUnion.Loader: a BatchSampler's batches of the ranks cannot be joined; use BatchSize")
	}
	if u.Uneven == KeepUneven {
		return errors.New("data.ShardUnion.Uneven: KeepUneven shards may differ in batch count; use PadRepeat or DropTail")
	}
	if err := u.rank(0).Validate(); err != nil {
		return fmt.Errorf("data.ShardUnion: %w", err)
	}
	return nil
}

// NumBatches implements Loader: the batch count of every rank.
func (u *ShardUnion) NumBatches() int {
	if u.Validate() != nil {
		return 0
	}
	return u.rank(0).NumBatches()
}

// Indices returns the indices of every batch of epoch, in order (nil for an
// invalid configuration), shuffled with the Loader's Seed, else
// DefaultSeed(). Batches uses the Loader's Seed, else its context's seed
// (SeedFrom), for the order and for a SeededDataset's examples alike, as
// each rank's loader under volt.Trainer has the trainer's seed.
func (u *ShardUnion) Indices(epoch int) [][]int {
	if u.Validate() != nil {
		return nil
	}
	bs := u.Loader.batchSize()
	batches := make([][]int, u.NumBatches())
	for r := range u.Replicas {
		shard := u.rank(r).Indices(epoch)
		for k := range batches {
			batches[k] = append(batches[k], shard[k*bs:min((k+1)*bs, len(shard))]...)
		}
	}
	return batches
}

// Batches implements Loader: the union batches of epoch from batch skip on.
func (u *ShardUnion) Batches(ctx context.Context, epoch, skip int) iter.Seq2[*Batch, error] {
	if err := u.Validate(); err != nil {
		return func(yield func(*Batch, error) bool) { yield(nil, err) }
	}
	// The ranks' loaders have a Seed (volt.Trainer gives each its own
	// seed, the one it puts in ctx), and a SeededDataset draws every
	// example from it: the union resolves the seed once, orders with it and
	// hands it to GetSeeded, as the ranks do.
	seed := u.Loader.seedFor(ctx)
	ranks := *u
	seeded := *u.Loader
	seeded.Seed = &seed
	ranks.Loader = &seeded
	// The union batches are batched by a copy of the loader whose batch
	// size is the union's, over the concatenated indices; DropLast has
	// already acted on each rank's shard.
	batches := ranks.Indices(epoch)
	union := seeded
	union.BatchSize = u.Replicas * u.Loader.batchSize()
	union.DropLast = false
	return union.runTasks(ctx, "data.ShardUnion.Batches", skip, u.Validate, func() iter.Seq[task] {
		return union.mapTasks(slices.Concat(batches...), epoch, seed, skip)
	})
}

// rank returns rank r's Sharded loader.
func (u *ShardUnion) rank(r int) *Sharded {
	return &Sharded{Loader: u.Loader, Rank: r, Replicas: u.Replicas, Uneven: u.Uneven}
}
