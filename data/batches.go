package data

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
)

// task builds one batch. Tasks are produced in batch order by a single
// goroutine and may be run on any goroutine.
type task func() (*Batch, error)

// Batches implements Loader. See Loader.Batches for the contract.
//
// Errors (an invalid configuration, a dataset or collation error, ctx being
// done) are yielded as (nil, err) and end the iteration.
func (l *DataLoader) Batches(ctx context.Context, epoch, skip int) iter.Seq2[*Batch, error] {
	return l.runTasks(ctx, "data.DataLoader.Batches", skip, l.Validate, func() iter.Seq[task] {
		if l.Iterable != nil {
			return l.streamTasks(ctx, epoch, skip, nil)
		}
		seed := l.seedFor(ctx)
		order, err := l.orderRead(ctx, epoch, seed)
		if err != nil {
			return errorTask(err)
		}
		return l.mapTasks(order, epoch, seed, skip)
	})
}

// runTasks yields the batches of the tasks that tasks returns, built inline
// or on l's workers, after validate passes and skip is checked; caller
// names the method in errors.
func (l *DataLoader) runTasks(ctx context.Context, caller string, skip int, validate func() error,
	tasks func() iter.Seq[task]) iter.Seq2[*Batch, error] {
	return func(yield func(*Batch, error) bool) {
		if err := validate(); err != nil {
			yield(nil, err)
			return
		}
		if skip < 0 {
			yield(nil, fmt.Errorf("%s: skip must be >= 0, got %d", caller, skip))
			return
		}
		if l.Workers == 0 {
			runInline(ctx, tasks(), yield)
			return
		}
		runParallel(ctx, tasks(), l.Workers, l.prefetch(), yield)
	}
}

// errorTask returns tasks that yield err.
func errorTask(err error) iter.Seq[task] {
	return func(yield func(task) bool) { yield(func() (*Batch, error) { return nil, err }) }
}

// batchIndices cuts an epoch's order into batches: the BatchSampler's
// (for epoch and seed), else BatchSize slices of it.
func (l *DataLoader) batchIndices(order []int, epoch int, seed uint64) ([][]int, error) {
	if l.BatchSampler != nil {
		batches, err := l.BatchSampler.Batches(order, epoch, seed)
		if err != nil {
			return nil, fmt.Errorf("data.DataLoader.BatchSampler: epoch %d: %w", epoch, err)
		}
		return batches, nil
	}
	bs := l.batchSize()
	batches := make([][]int, batchCount(len(order), bs, l.DropLast))
	for b := range batches {
		batches[b] = order[b*bs : min((b+1)*bs, len(order))]
	}
	return batches, nil
}

// mapTasks returns the tasks of the batches of a map-style dataset from
// batch index skip on, for the given example order (all of the dataset, or
// one rank's shard of it) of epoch, batched for seed.
func (l *DataLoader) mapTasks(order []int, epoch int, seed uint64, skip int) iter.Seq[task] {
	batches, err := l.batchIndices(order, epoch, seed)
	if err != nil {
		return errorTask(err)
	}
	getter, isBatchGetter := l.Dataset.(BatchGetter)
	collate := l.collator()
	return func(yield func(task) bool) {
		for b := skip; b < len(batches); b++ {
			indices := batches[b]
			var t task
			if isBatchGetter {
				t = func() (*Batch, error) { return getBatch(getter, indices, b) }
			} else {
				t = func() (*Batch, error) { return l.getAndCollate(collate, indices, b, epoch, seed) }
			}
			if !yield(t) {
				return
			}
		}
	}
}

// getBatch builds batch b with the BatchGetter fast path.
func getBatch(getter BatchGetter, indices []int, b int) (*Batch, error) {
	batch, err := getter.GetBatch(indices)
	if err != nil {
		return nil, fmt.Errorf("data.DataLoader: batch %d: GetBatch: %w", b, err)
	}
	if batch == nil {
		return nil, fmt.Errorf("data.DataLoader: batch %d: GetBatch returned a nil batch and no error", b)
	}
	return batch, nil
}

// getAndCollate builds batch b of epoch with Dataset.Get (GetSeeded, for a
// SeededDataset) and the collator.
func (l *DataLoader) getAndCollate(collate Collator, indices []int, b, epoch int, seed uint64) (*Batch, error) {
	examples := make([]Example, len(indices))
	seeded, isSeeded := l.Dataset.(SeededDataset)
	for i, idx := range indices {
		var ex Example
		var err error
		if isSeeded {
			ex, err = seeded.GetSeeded(idx, epoch, seed)
		} else {
			ex, err = l.Dataset.Get(idx)
		}
		if err != nil {
			return nil, fmt.Errorf("data.DataLoader: batch %d: dataset Get(%d): %w", b, idx, err)
		}
		examples[i] = ex
	}
	return collateBatch(collate, examples, b)
}

// collateBatch runs the collator for batch b, wrapping its error.
func collateBatch(collate Collator, examples []Example, b int) (*Batch, error) {
	batch, err := collate(examples)
	if err != nil {
		return nil, fmt.Errorf("data.DataLoader: batch %d: collate: %w", b, err)
	}
	if batch == nil {
		return nil, fmt.Errorf("data.DataLoader: batch %d: collator returned a nil batch and no error", b)
	}
	return batch, nil
}

// iterableTasks returns the tasks of the batches of a stream from batch
// index skip on. A pass continued from a saved position (src.start) starts
// there; otherwise the examples of skipped batches are read (to advance the
// stream) but not collated. With a StatefulIterable each batch carries the
// position after it (Batch.StreamState).
func (l *DataLoader) iterableTasks(src streamSource, skip int) iter.Seq[task] {
	collate := l.collator()
	bs := l.batchSize()
	return func(yield func(task) bool) {
		chunk := make([]Example, 0, bs)
		b, count := src.start.Batches, src.start.Examples
		emit := func() bool {
			examples, batchIdx := chunk, b
			var pos []byte
			if src.state != nil {
				var err error
				if pos, err = l.streamPosition(src, b+1, count); err != nil {
					return yield(func() (*Batch, error) { return nil, err })
				}
			}
			return yield(func() (*Batch, error) {
				batch, err := collateBatch(collate, examples, batchIdx)
				if batch != nil {
					batch.StreamState = pos
				}
				return batch, err
			})
		}
		for ex, err := range src.examples {
			if err != nil {
				err = fmt.Errorf("data.DataLoader: batch %d: iterable dataset, example %d: %w", b, count, err)
				yield(func() (*Batch, error) { return nil, err })
				return
			}
			count++
			if src.keep != nil && !src.keep(count-1) {
				continue
			}
			chunk = append(chunk, ex)
			if len(chunk) < bs {
				continue
			}
			if b >= skip {
				if !emit() {
					return
				}
				chunk = make([]Example, 0, bs)
			} else {
				chunk = chunk[:0]
			}
			b++
		}
		if len(chunk) > 0 && !l.DropLast && b >= skip {
			emit()
		}
	}
}

// streamPosition encodes the position after batches batches, count examples
// of the pass read, with the dataset's current state.
func (l *DataLoader) streamPosition(src streamSource, batches int, count int64) ([]byte, error) {
	state, err := src.state()
	if err != nil {
		return nil, fmt.Errorf("data.DataLoader: batch %d: iterable dataset State: %w", batches-1, err)
	}
	pos, err := json.Marshal(streamPosition{Epoch: src.start.Epoch, Batches: batches, Examples: count, Dataset: state})
	if err != nil {
		return nil, fmt.Errorf("data.DataLoader: batch %d: encoding the stream position: %w", batches-1, err)
	}
	return pos, nil
}
