package data

import (
	"context"
	"errors"
	"iter"
)

// source is one loader's batch iterator, pulled one batch per step.
type source struct {
	next func() (*Batch, error, bool)
	stop func()
	// done marks a loader that is exhausted (MaxSize) and contributes no
	// more parts.
	done bool
}

// close stops the iterator, if open.
func (s *source) close() {
	if s.stop != nil {
		s.stop()
		s.next, s.stop = nil, nil
	}
}

// zipper runs the MaxSizeCycle, MaxSize and MinSize modes: each step pulls
// one batch from every loader that is not exhausted and combines them.
type zipper struct {
	c     *CombinedLoader
	mode  CombineMode
	ctx   context.Context
	epoch int
	srcs  []source
}

// open (re)starts loader i's iterator at batch skip.
func (z *zipper) open(i, skip int) {
	s := &z.srcs[i]
	s.close()
	s.next, s.stop = iter.Pull2(z.c.Loaders[i].Batches(z.ctx, z.epoch, skip))
}

// close stops every open iterator.
func (z *zipper) close() {
	for i := range z.srcs {
		z.srcs[i].close()
	}
}

// stepLimit returns the number of combined batches the known lengths allow,
// or -1 when they bound nothing (the loaders' iterators then decide).
func stepLimit(mode CombineMode, lens []int) int {
	limit := -1
	for _, n := range lens {
		switch {
		case mode == MinSize && n >= 0:
			if limit < 0 || n < limit {
				limit = n
			}
		case mode != MinSize && n < 0: // MaxSize with an unknown length
			return -1
		case mode != MinSize:
			limit = max(limit, n)
		}
	}
	return limit
}

// run yields the combined batches from index skip on. Every loader starts
// at its own position for combined batch skip: skip modulo its length when
// cycled (MaxSizeCycle), skip otherwise.
func (z *zipper) run(skip int, yield func(*Batch, error) bool) {
	lens := z.c.lengths()
	limit := stepLimit(z.mode, lens)
	if limit >= 0 && skip >= limit {
		return
	}
	for i, n := range lens {
		switch {
		case z.mode == MaxSizeCycle: // n > 0: Validate and limit > skip >= 0 ensure it.
			z.open(i, skip%n)
		case n >= 0 && skip >= n: // MaxSize only: MinSize's limit is <= n.
			z.srcs[i].done = true
		default:
			z.open(i, skip)
		}
	}
	for step := skip; limit < 0 || step < limit; step++ {
		if err := z.ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		b, ok, err := z.step()
		if err != nil {
			yield(nil, err)
			return
		}
		if !ok || !yield(b, nil) {
			return
		}
	}
}

// step pulls the batches of one step and combines them. It returns ok false
// when the iteration is over: a loader is exhausted in MinSize mode, all are
// in MaxSize mode.
func (z *zipper) step() (b *Batch, ok bool, err error) {
	var idx []int
	var names []string
	var batches []*Batch
	for i := range z.srcs {
		s := &z.srcs[i]
		if s.done {
			continue
		}
		b, err, ok := s.next()
		if !ok && z.mode == MaxSizeCycle {
			z.open(i, 0)
			if b, err, ok = s.next(); !ok {
				return nil, false, z.c.loaderError(i, errors.New("yielded no batches when restarted by max_size_cycle"))
			}
		}
		if !ok {
			if z.mode == MinSize {
				return nil, false, nil
			}
			s.done = true
			s.close()
			continue
		}
		if err != nil {
			return nil, false, z.c.loaderError(i, err)
		}
		if b == nil {
			return nil, false, z.c.nilBatchError(i)
		}
		idx = append(idx, i)
		names = append(names, z.c.name(i))
		batches = append(batches, b)
	}
	if len(batches) == 0 {
		return nil, false, nil
	}
	return combine(idx, names, batches), true, nil
}
