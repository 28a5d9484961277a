package data

import (
	"context"
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
			return l.iterableTasks(epoch, skip)
		}
		return l.mapTasks(l.order(epoch, l.seedFor(ctx)), skip)
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

// mapTasks returns the tasks of the batches of a map-style dataset from
// batch index skip on, for the given example order (all of the dataset, or
// one rank's shard of it).
func (l *DataLoader) mapTasks(order []int, skip int) iter.Seq[task] {
	bs := l.batchSize()
	numBatches := batchCount(len(order), bs, l.DropLast)
	getter, isBatchGetter := l.Dataset.(BatchGetter)
	collate := l.collator()
	return func(yield func(task) bool) {
		for b := skip; b < numBatches; b++ {
			indices := order[b*bs : min((b+1)*bs, len(order))]
			var t task
			if isBatchGetter {
				t = func() (*Batch, error) { return getBatch(getter, indices, b) }
			} else {
				t = func() (*Batch, error) { return l.getAndCollate(collate, indices, b) }
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

// getAndCollate builds batch b with Dataset.Get and the collator.
func (l *DataLoader) getAndCollate(collate Collator, indices []int, b int) (*Batch, error) {
	examples := make([]Example, len(indices))
	for i, idx := range indices {
		ex, err := l.Dataset.Get(idx)
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

// iterableTasks returns the tasks of the batches of an iterable dataset from
// batch index skip on. Examples of skipped batches are read (to advance the
// stream) but not collated.
func (l *DataLoader) iterableTasks(epoch, skip int) iter.Seq[task] {
	collate := l.collator()
	bs := l.batchSize()
	return func(yield func(task) bool) {
		chunk := make([]Example, 0, bs)
		b, count := 0, 0
		for ex, err := range l.Iterable.Iter(epoch) {
			if err != nil {
				err = fmt.Errorf("data.DataLoader: batch %d: iterable dataset, example %d: %w", b, count, err)
				yield(func() (*Batch, error) { return nil, err })
				return
			}
			count++
			chunk = append(chunk, ex)
			if len(chunk) < bs {
				continue
			}
			if b >= skip {
				examples, batchIdx := chunk, b
				if !yield(func() (*Batch, error) { return collateBatch(collate, examples, batchIdx) }) {
					return
				}
				chunk = make([]Example, 0, bs)
			} else {
				chunk = chunk[:0]
			}
			b++
		}
		if len(chunk) > 0 && !l.DropLast && b >= skip {
			examples, batchIdx := chunk, b
			yield(func() (*Batch, error) { return collateBatch(collate, examples, batchIdx) })
		}
	}
}
