package data

import (
	"context"
	"fmt"
	"iter"
)

// Batches implements Loader. See Loader.Batches for the contract and
// CombinedLoader for what the batches hold.
//
// skip counts combined batches (Sequential: batches of all loaders in
// order). Each loader is started with its own skip where its position is
// known (always, except for a loader of unknown length in Sequential mode,
// whose skipped batches are built and dropped). Errors (an invalid
// configuration, a loader's error, ctx being done) are yielded as
// (nil, err), naming the loader, and end the iteration; every loader's
// iterator is stopped when Batches' iterator returns.
func (c *CombinedLoader) Batches(ctx context.Context, epoch, skip int) iter.Seq2[*Batch, error] {
	return func(yield func(*Batch, error) bool) {
		if err := c.Validate(); err != nil {
			yield(nil, err)
			return
		}
		if skip < 0 {
			yield(nil, fmt.Errorf("data.CombinedLoader.Batches: skip must be >= 0, got %d", skip))
			return
		}
		// The caller's batch count is the combined loader's, not its
		// loaders': they are read to their ends (WithBatchesRead).
		ctx = context.WithValue(ctx, batchesReadKey{}, nil)
		mode, _ := c.mode()
		if mode == Sequential {
			c.sequential(ctx, epoch, skip, yield)
			return
		}
		z := &zipper{c: c, mode: mode, ctx: ctx, epoch: epoch, srcs: make([]source, len(c.Loaders))}
		defer z.close()
		z.run(skip, yield)
	}
}

// loaderError wraps err, from loader i, with the loader's index and name.
func (c *CombinedLoader) loaderError(i int, err error) error {
	return fmt.Errorf("data.CombinedLoader: Loaders[%d] (%q): %w", i, c.name(i), err)
}

// nilBatchError is the error for a loader that yields a nil batch and no error.
func (c *CombinedLoader) nilBatchError(i int) error {
	return c.loaderError(i, fmt.Errorf("yielded a nil batch and no error"))
}

// sequential runs the loaders one after the other from combined batch skip.
func (c *CombinedLoader) sequential(ctx context.Context, epoch, skip int, yield func(*Batch, error) bool) {
	remaining := skip // batches still to skip
	for i, l := range c.Loaders {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		n := l.NumBatches()
		if n >= 0 && remaining >= n {
			remaining -= n
			continue
		}
		// A loader of known length skips by itself; one of unknown length is
		// run from its start, dropping the batches to skip while counting them.
		start, drop := remaining, 0
		if n < 0 {
			start, drop = 0, remaining
		}
		count := 0
		for b, err := range l.Batches(ctx, epoch, start) {
			if err == nil && b == nil {
				err = c.nilBatchError(i)
			} else if err != nil {
				err = c.loaderError(i, err)
			}
			if err != nil {
				yield(nil, err)
				return
			}
			count++
			if count <= drop {
				continue
			}
			out := *b
			out.DataloaderIdx = i
			if !yield(&out, nil) {
				return
			}
		}
		remaining = max(0, drop-count)
	}
}
