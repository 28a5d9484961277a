package data

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// StreamShard is the Loader of one rank reading a stream (a DataLoader over
// an IterableDataset) in data-parallel training.
//
// Split: a dataset that implements ShardedIterable gives each rank its own
// part (IterShard(epoch, Rank, Replicas)); any other stream is dealt
// round-robin: every rank reads the whole pass of Iter(epoch) and keeps the
// examples whose position in it, counted from 0, is Rank modulo Replicas.
// The parts are disjoint, and deterministic when Iter is. Each rank batches
// its part with the DataLoader's BatchSize and DropLast.
//
// Unequal lengths: the parts may end at different points (a round-robin
// deal of n examples gives rank r ⌈(n-r)/Replicas⌉ of them; a
// ShardedIterable's parts may differ by any amount). With Agree set (volt
// sets it for a training loader, whose every step all-reduces) every rank
// stops at the same batch: before yielding each batch the ranks agree
// whether all of them have one, and the epoch ends for all at the first
// batch some rank lacks. So every rank trains the same number of batches,
// the shortest part's; the batches the longer parts hold past it are not
// read in that epoch (at most one batch, a partial one when DropLast is
// false, for a round-robin deal). Without Agree (evaluation, whose results
// are reduced at epoch end) each rank reads all of its part.
//
// A StatefulIterable resumes from Batch.StreamState in O(1) as with a
// DataLoader; the state of a round-robin deal counts the examples of the
// whole pass, so each rank continues its own part.
type StreamShard struct {
	// Loader is the loader all ranks share (same configuration on every
	// rank); its Iterable must be set.
	Loader *DataLoader
	// Rank is this process's rank, in [0, Replicas).
	Rank int
	// Replicas is the number of ranks (the world size), >= 1.
	Replicas int
	// Agree, when set, is called on every rank before each batch with
	// whether this rank has it, and returns whether every rank has it
	// (an all-reduce of the flag with min): the epoch ends when it returns
	// false. It is called on the goroutine that ranges over Batches.
	Agree func(have bool) (bool, error)
}

var _ Loader = (*StreamShard)(nil)

// Validate checks the configuration and returns an error naming every bad
// field, or nil.
func (s *StreamShard) Validate() error {
	var errs []error
	switch {
	case s.Loader == nil:
		errs = append(errs, errors.New("data.StreamShard.Loader: must be set"))
	case s.Loader.Iterable == nil:
		errs = append(errs, errors.New("data.StreamShard.Loader: its Iterable must be set (a map-style Dataset is sharded by data.Sharded)"))
	default:
		if err := s.Loader.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("data.StreamShard.Loader: %w", err))
		}
	}
	if s.Replicas < 1 {
		errs = append(errs, fmt.Errorf("data.StreamShard.Replicas: must be >= 1, got %d", s.Replicas))
	} else if s.Rank < 0 || s.Rank >= s.Replicas {
		errs = append(errs, fmt.Errorf("data.StreamShard.Rank: must be in [0, Replicas=%d), got %d", s.Replicas, s.Rank))
	}
	return errors.Join(errs...)
}

// NumBatches implements Loader: -1, a stream's length is not known.
func (s *StreamShard) NumBatches() int { return -1 }

// Batches implements Loader: this rank's batches of epoch from batch skip
// on (with Agree, only as many as every rank has).
func (s *StreamShard) Batches(ctx context.Context, epoch, skip int) iter.Seq2[*Batch, error] {
	if err := s.Validate(); err != nil {
		return func(yield func(*Batch, error) bool) { yield(nil, err) }
	}
	shard := &streamShardOf{rank: s.Rank, replicas: s.Replicas}
	own := s.Loader.runTasks(ctx, "data.StreamShard.Batches", skip, s.Validate, func() iter.Seq[task] {
		return s.Loader.streamTasks(ctx, epoch, skip, shard)
	})
	if s.Agree == nil {
		return own
	}
	return func(yield func(*Batch, error) bool) {
		for b, err := range own {
			if err != nil {
				// This rank fails; the trainer ends the job.
				yield(nil, err)
				return
			}
			all, err := s.Agree(true)
			if err != nil {
				yield(nil, fmt.Errorf("data.StreamShard: agreeing on batch %d of epoch %d: %w", skip, epoch, err))
				return
			}
			if !all || !yield(b, nil) {
				return
			}
			skip++
		}
		if _, err := s.Agree(false); err != nil {
			yield(nil, fmt.Errorf("data.StreamShard: agreeing on the end of epoch %d: %w", epoch, err))
		}
	}
}
