package data

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
)

// StatefulIterable is an IterableDataset that can say where it is in a pass
// and continue from there, so that a run resumed mid-epoch starts reading
// at once instead of replaying the examples before its resume point.
//
// The DataLoader calls State on the goroutine running Iter, between two
// examples (right after the last example of each batch): its result must
// describe the examples yielded so far in the pass in progress. LoadState,
// called before Iter, makes the next pass of that epoch continue from such
// a position: it yields exactly the examples an uninterrupted pass would
// have yielded after it. The state is saved in checkpoints (opaque bytes;
// the dataset may encode its epoch in it and check it).
type StatefulIterable interface {
	IterableDataset
	// State returns the position of the pass in progress.
	State() ([]byte, error)
	// LoadState makes the next Iter call continue from state.
	LoadState(state []byte) error
}

// ShardedIterable is an IterableDataset that splits itself across the ranks
// of a data-parallel job (a file per rank, a partitioned queue). Without
// it, a StreamShard deals the examples of Iter round-robin.
type ShardedIterable interface {
	IterableDataset
	// IterShard yields rank's part (of replicas) of the examples of one
	// epoch; the parts of the ranks are disjoint. They may differ in
	// length. A StatefulIterable's State describes the pass of IterShard.
	IterShard(epoch, rank, replicas int) iter.Seq2[Example, error]
}

// streamPosition is a stream loader's position, as it travels in
// Batch.StreamState: after Batches batches of Epoch, having read Examples
// examples of the dataset's pass (the round-robin deal needs the count), the
// dataset in state Dataset.
type streamPosition struct {
	Epoch    int    `json:"epoch"`
	Batches  int    `json:"batches"`
	Examples int64  `json:"examples"`
	Dataset  []byte `json:"dataset"`
}

// streamStateKey is the context key of WithStreamState.
type streamStateKey struct{}

// streamResume is the value of WithStreamState.
type streamResume struct {
	epoch, batches int
	state          []byte
}

// WithStreamState returns a context that makes a DataLoader (or StreamShard)
// over a StatefulIterable start Batches(ctx, epoch, batches) from state, a
// Batch.StreamState of the batch whose index was batches-1 in that epoch,
// instead of replaying the pass's first batches. A Batches call for another
// (epoch, skip) ignores it. volt.Trainer passes the state its checkpoint
// holds when it resumes mid-epoch.
func WithStreamState(ctx context.Context, epoch, batches int, state []byte) context.Context {
	return context.WithValue(ctx, streamStateKey{}, streamResume{epoch: epoch, batches: batches, state: state})
}

// streamStateFor returns the state of WithStreamState for (epoch, skip), or
// nil.
func streamStateFor(ctx context.Context, epoch, skip int) []byte {
	if r, ok := ctx.Value(streamStateKey{}).(streamResume); ok && r.epoch == epoch && r.batches == skip {
		return r.state
	}
	return nil
}

// decodeStreamPosition decodes a Batch.StreamState for a resume at (epoch,
// skip), checking that it is one.
func decodeStreamPosition(state []byte, epoch, skip int) (streamPosition, error) {
	var p streamPosition
	if err := json.Unmarshal(state, &p); err != nil {
		return p, fmt.Errorf("stream state: %w", err)
	}
	if p.Epoch != epoch || p.Batches != skip {
		return p, fmt.Errorf("stream state is the position after %d batches of epoch %d, not after %d batches of epoch %d",
			p.Batches, p.Epoch, skip, epoch)
	}
	return p, nil
}

// streamSource is where iterableTasks reads examples: a pass of the
// dataset, the state function of a StatefulIterable (nil otherwise), and
// the filter that keeps this rank's examples (nil: all).
type streamSource struct {
	examples iter.Seq2[Example, error]
	state    func() ([]byte, error)
	keep     func(example int64) bool
	// start is the position the pass continues from (zero at the start of
	// the epoch).
	start streamPosition
}

// openStream opens the pass of ds for (epoch, skip), continuing from the
// state ctx carries for it when ds is a StatefulIterable, and reports
// whether it did (false: the caller replays skip batches). shard is nil in
// one process.
func openStream(ctx context.Context, ds IterableDataset, epoch, skip int, shard *streamShardOf) (streamSource, bool, error) {
	stateful, isStateful := ds.(StatefulIterable)
	src := streamSource{start: streamPosition{Epoch: epoch}}
	resumed := false
	if state := streamStateFor(ctx, epoch, skip); state != nil && isStateful && skip > 0 {
		p, err := decodeStreamPosition(state, epoch, skip)
		if err != nil {
			return src, false, err
		}
		if err := stateful.LoadState(p.Dataset); err != nil {
			return src, false, fmt.Errorf("LoadState: %w", err)
		}
		src.start, resumed = p, true
	}
	if isStateful {
		src.state = stateful.State
	}
	src.examples = ds.Iter(epoch)
	if shard != nil {
		if sh, ok := ds.(ShardedIterable); ok {
			src.examples = sh.IterShard(epoch, shard.rank, shard.replicas)
		} else {
			rank, replicas := int64(shard.rank), int64(shard.replicas)
			src.keep = func(i int64) bool { return i%replicas == rank }
		}
	}
	return src, resumed, nil
}

// streamShardOf is one rank's part of a stream.
type streamShardOf struct{ rank, replicas int }

// streamTasks opens the stream for (epoch, skip) (this rank's part of it
// when shard is set) and returns its tasks; an error opening it is the
// first task's.
func (l *DataLoader) streamTasks(ctx context.Context, epoch, skip int, shard *streamShardOf) iter.Seq[task] {
	src, _, err := openStream(ctx, l.Iterable, epoch, skip, shard)
	if err != nil {
		err = fmt.Errorf("data.DataLoader: resuming epoch %d at batch %d: %w", epoch, skip, err)
		return func(yield func(task) bool) { yield(func() (*Batch, error) { return nil, err }) }
	}
	return l.iterableTasks(src, skip)
}
