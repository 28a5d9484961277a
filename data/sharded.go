package data

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// Uneven says what a Sharded loader does when the dataset's length is not
// a multiple of the number of ranks.
type Uneven int

const (
	// PadRepeat pads the epoch's order by repeating its first indices until
	// every rank gets ⌈n/ranks⌉ samples (torch's DistributedSampler with
	// drop_last=False, Lightning's default): some samples are read twice
	// per epoch, and every rank has the same number of batches, as the
	// per-step gradient all-reduce requires.
	PadRepeat Uneven = iota
	// DropTail drops the last n mod ranks indices of the epoch's order so
	// every rank gets ⌊n/ranks⌋ samples (DistributedSampler's
	// drop_last=True): some samples are not read this epoch.
	DropTail
	// KeepUneven neither pads nor drops: rank r reads ⌈(n-r)/ranks⌉
	// samples, so each sample is read exactly once per epoch but the ranks'
	// batch counts may differ by one. Only for loops without per-batch
	// collectives (evaluation whose metrics are reduced at epoch end), so
	// that their results equal one process's over the whole set.
	KeepUneven
)

// String returns the policy's Go name.
func (u Uneven) String() string {
	switch u {
	case PadRepeat:
		return "PadRepeat"
	case DropTail:
		return "DropTail"
	case KeepUneven:
		return "KeepUneven"
	}
	return fmt.Sprintf("Uneven(%d)", int(u))
}

// Sharded is the Loader of one rank in data-parallel training: it batches
// the rank's shard of a DataLoader's map-style dataset, choosing the
// indices as torch's DistributedSampler does under Lightning's DDP. Each
// epoch it orders the dataset, applies Uneven, and gives rank r the
// positions r, r+Replicas, r+2·Replicas, … of that order, in that order;
// then it batches them with the DataLoader's BatchSize and DropLast.
//
// The order is 0..n-1 when the DataLoader's Shuffle is false, and
// TorchRandperm(n, seed+epoch) when it is true (seed: the DataLoader's Seed,
// else DefaultSeed(), which volt.SeedEverything sets like Lightning's
// PL_GLOBAL_SEED): with Shuffle true every rank reads exactly the indices
// Lightning 2.2.5 gives it. Two differences from Lightning, on purpose:
//
//   - Shuffle false is honoured. Lightning replaces a training loader's
//     sampler with a DistributedSampler(shuffle=True) even when the user
//     asked for shuffle=False (Lightning issue #21131); volt reads the
//     shards in order, as Lightning does only with
//     use_distributed_sampler=False and the user's own
//     DistributedSampler(shuffle=False).
//   - A one-process DataLoader with Shuffle uses volt's own permutation
//     (DataLoader.Order), not torch's; under DDP the order is torch's so
//     that a run ported from Lightning reads the same samples on each rank.
//
// The DataLoader's Workers, Prefetch and Collate (or its dataset's
// BatchGetter) build the batches; an Iterable dataset cannot be sharded by
// index and is refused.
type Sharded struct {
	// Loader is the loader all ranks share (the same configuration on
	// every rank).
	Loader *DataLoader
	// Rank is this process's rank, in [0, Replicas).
	Rank int
	// Replicas is the number of ranks (the world size), >= 1.
	Replicas int
	// Uneven is the policy for a length that is not a multiple of
	// Replicas; the zero value is PadRepeat, Lightning's behaviour.
	Uneven Uneven
	// PermuteSampler, with a Loader whose Sampler is set, permutes the
	// positions of the Sampler's indices each epoch before dealing them:
	// TorchRandperm(len, seed+epoch), seed the Loader's. That is
	// Lightning's DistributedSamplerWrapper(shuffle=True), which Lightning
	// puts around a training loader's custom sampler; volt sets it for
	// training loaders.
	PermuteSampler bool
}

var _ Loader = (*Sharded)(nil)

// Validate checks the configuration and returns an error naming every bad
// field, or nil.
func (s *Sharded) Validate() error {
	var errs []error
	switch {
	case s.Loader == nil:
		errs = append(errs, errors.New("data.Sharded.Loader: must be set"))
	case s.Loader.Iterable != nil:
		errs = append(errs, errors.New("data.Sharded.Loader: an Iterable dataset cannot be sharded by index; "+
			"use a map-style Dataset, or shard the stream in the dataset's Iter by rank"))
	default:
		if err := s.Loader.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("data.Sharded.Loader: %w", err))
		}
	}
	if s.Replicas < 1 {
		errs = append(errs, fmt.Errorf("data.Sharded.Replicas: must be >= 1, got %d", s.Replicas))
	} else if s.Rank < 0 || s.Rank >= s.Replicas {
		errs = append(errs, fmt.Errorf("data.Sharded.Rank: must be in [0, Replicas=%d), got %d", s.Replicas, s.Rank))
	}
	if s.Uneven < PadRepeat || s.Uneven > KeepUneven {
		errs = append(errs, fmt.Errorf("data.Sharded.Uneven: %d is not one of PadRepeat, DropTail, KeepUneven", int(s.Uneven)))
	}
	return errors.Join(errs...)
}

// NumSamples returns the number of samples this rank reads per epoch
// (torch's DistributedSampler.num_samples for PadRepeat and DropTail), or
// 0 for an invalid configuration.
func (s *Sharded) NumSamples() int {
	if s.Validate() != nil {
		return 0
	}
	return shardLen(s.Loader.samples(), s.Rank, s.Replicas, s.Uneven)
}

// NumBatches implements Loader: the batches of NumSamples samples.
func (s *Sharded) NumBatches() int {
	if s.Validate() != nil {
		return 0
	}
	return s.Loader.batchesOf(s.NumSamples())
}

// Indices returns the dataset indices this rank reads in epoch, in order
// (nil for an invalid configuration or a Sampler that fails).
func (s *Sharded) Indices(epoch int) []int {
	indices, err := s.indices(epoch)
	if err != nil {
		return nil
	}
	return indices
}

// indices implements Indices, returning the Sampler's error. With a
// Sampler, the order dealt is the Sampler's indices (their positions
// permuted with PermuteSampler), as Lightning's DistributedSamplerWrapper
// deals them.
func (s *Sharded) indices(epoch int) ([]int, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	n := s.Loader.Dataset.Len()
	seed := s.Loader.seed()
	var order []int
	switch {
	case s.Loader.Sampler != nil:
		list, err := s.Loader.orderOf(epoch, seed)
		if err != nil {
			return nil, err
		}
		order = list
		if s.PermuteSampler {
			order = make([]int, len(list))
			for i, p := range TorchRandperm(len(list), seed+uint64(epoch)) {
				order[i] = list[p]
			}
		}
	case s.Loader.Shuffle:
		order = TorchRandperm(n, seed+uint64(epoch))
	default:
		order = s.Loader.order(epoch, 0)
	}
	if len(order) == 0 {
		return nil, nil
	}
	return shard(order, s.Rank, s.Replicas, s.Uneven), nil
}

// Batches implements Loader: the batches of Indices(epoch) from batch skip
// on (mid-epoch resume continues the shard exactly).
func (s *Sharded) Batches(ctx context.Context, epoch, skip int) iter.Seq2[*Batch, error] {
	if err := s.Validate(); err != nil {
		return func(yield func(*Batch, error) bool) { yield(nil, err) }
	}
	return s.Loader.runTasks(ctx, "data.Sharded.Batches", skip, s.Validate, func() iter.Seq[task] {
		indices, err := s.indices(epoch)
		if err != nil {
			return errorTask(err)
		}
		return s.Loader.mapTasks(indices, epoch, s.Loader.seed(), skip)
	})
}

// shardLen is the length of rank's shard of n indices.
func shardLen(n, rank, replicas int, uneven Uneven) int {
	switch uneven {
	case DropTail:
		return n / replicas
	case KeepUneven:
		return (n - rank + replicas - 1) / replicas
	}
	return (n + replicas - 1) / replicas
}

// shard returns rank's part of order under the uneven policy: positions
// rank, rank+replicas, … of order padded (by repeating it from its start)
// or cut to a multiple of replicas.
func shard(order []int, rank, replicas int, uneven Uneven) []int {
	n := len(order)
	total := n
	switch uneven {
	case PadRepeat:
		total = shardLen(n, rank, replicas, uneven) * replicas
	case DropTail:
		total = n / replicas * replicas
	}
	out := make([]int, 0, shardLen(n, rank, replicas, uneven))
	for i := rank; i < total; i += replicas {
		out = append(out, order[i%n])
	}
	return out
}
