package volt

import (
	"context"
	"errors"
	"iter"

	"github.com/voltml/volt/data"
)

// epochIterator is one pass over a loader's batches as a loop consumes them
// (Lightning's data fetchers, Keras's EpochIterator). It pulls the first
// batch when it opens, so that the fit loop can trace the training step on
// it before any hook of the epoch and then run the same pass: a streaming
// loader is read once, and a resumed run's pass starts at its resume point.
//
// With look-ahead (training) it pulls each batch one ahead, so that Next
// knows the last batch of the pass, which closes the accumulation window and
// triggers the end-of-epoch validation; the limit ends the pass without
// pulling past it. Without look-ahead (the evaluation loops' way) it pulls a
// batch when Next is called, checks the limit on it before returning it,
// and knows a last batch only from the limit.
type epochIterator struct {
	epoch, skip int // the loader's epoch and the batch the pass starts at
	// limit ends the pass at that batch index (-1: the loader's end).
	limit     int
	lookAhead bool
	next      func() (*data.Batch, error, bool)
	stop      func()
	idx       int // the index of the pending batch
	// The pending batch: pulled, not yet returned (pulled false: none).
	pulled bool
	batch  *data.Batch
	err    error
	ok     bool
}

// errNilBatch is a loader yielding a nil batch without an error.
var errNilBatch = errors.New("the loader yielded a nil batch without an error")

// openEpoch opens a pass over loader's batches of epoch from batch skip
// (each pull profiled as action) and pulls its first batch.
func (t *Trainer) openEpoch(ctx context.Context, action string, loader data.Loader, epoch, skip, limit int, lookAhead bool) *epochIterator {
	next, stop := iter.Pull2(t.profiledBatches(action, loader.Batches(ctx, epoch, skip)))
	it := &epochIterator{epoch: epoch, skip: skip, limit: limit, lookAhead: lookAhead, next: next, stop: stop, idx: skip}
	it.pull()
	return it
}

// pull reads the loader's next batch into the pending one.
func (it *epochIterator) pull() {
	it.batch, it.err, it.ok = it.next()
	it.pulled = true
}

// first returns the pass's first batch (or its error) without taking it:
// Next returns it again. ok is false when the loader gave nothing.
func (it *epochIterator) first() (b *data.Batch, err error, ok bool) {
	if it.ok && it.batch == nil && it.err == nil {
		return nil, errNilBatch, true
	}
	return it.batch, it.err, it.ok
}

// Next returns the pass's next batch and whether it is the last one; a nil
// batch (and nil error) when the pass is over. After an error the pass is
// over; with look-ahead, also after the batch returned as the last.
func (it *epochIterator) Next() (b *data.Batch, last bool, err error) {
	if !it.pulled {
		it.pull()
	}
	if !it.ok || !it.lookAhead && it.limit >= 0 && it.idx >= it.limit {
		it.ok = false
		return nil, false, nil
	}
	b, err = it.batch, it.err
	it.pulled, it.batch, it.err = false, nil, nil
	if err == nil && b == nil {
		err = errNilBatch
	}
	if err != nil {
		it.pulled, it.ok = true, false
		return nil, false, err
	}
	it.idx++
	last = it.limit >= 0 && it.idx >= it.limit
	switch {
	case !it.lookAhead:
	case last:
		it.pulled, it.ok = true, false
	default:
		it.pull()
		last = !it.ok
	}
	return b, last, nil
}

// close ends the pass, stopping the loader's iteration.
func (it *epochIterator) close() { it.stop() }
