package data

import (
	"context"
	"fmt"
	"iter"
	"sync"
)

// result is the outcome of one task.
type result struct {
	batch *Batch
	err   error
}

// runTask runs t, converting a panic into an error.
func runTask(t task) (res result) {
	defer func() {
		if r := recover(); r != nil {
			res = result{err: fmt.Errorf("data.DataLoader: panic while building a batch: %v", r)}
		}
	}()
	b, err := t()
	return result{batch: b, err: err}
}

// runInline runs the tasks one by one on the calling goroutine.
func runInline(ctx context.Context, tasks iter.Seq[task], yield func(*Batch, error) bool) {
	for t := range tasks {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		res := runTask(t)
		if !yield(res.batch, res.err) || res.err != nil {
			return
		}
	}
}

// job is a task and the channel (buffered, capacity 1) for its result.
type job struct {
	t   task
	out chan result
}

// runParallel runs the tasks on `workers` goroutines and yields the results
// strictly in task order, with at most `window` results pending. All
// goroutines have exited when it returns.
func runParallel(ctx context.Context, tasks iter.Seq[task], workers, window int, yield func(*Batch, error) bool) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()

	// pending holds the per-task result channels in task order; its capacity
	// bounds how far ahead of the consumer the producer can get.
	pending := make(chan chan result, window)
	jobs := make(chan job)
	complete := false // set by the producer when all tasks were handed out

	wg.Add(1)
	go func() { // Producer: pulls tasks in order and hands them out.
		defer wg.Done()
		defer close(pending)
		defer close(jobs)
		for t := range tasks {
			out := make(chan result, 1)
			select {
			case pending <- out:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- job{t: t, out: out}:
			case <-ctx.Done():
				return
			}
		}
		complete = true
	}()

	for range workers {
		wg.Add(1)
		go func() { // Worker: runs any job, in any order.
			defer wg.Done()
			for j := range jobs {
				if err := ctx.Err(); err != nil {
					j.out <- result{err: err}
					continue
				}
				j.out <- runTask(j.t)
			}
		}()
	}

	for out := range pending {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		var res result
		select {
		case res = <-out:
		case <-ctx.Done():
			yield(nil, ctx.Err())
			return
		}
		if !yield(res.batch, res.err) || res.err != nil {
			return
		}
	}
	// The producer closed pending: it either handed out every task or
	// stopped because ctx is done.
	if !complete {
		yield(nil, ctx.Err())
	}
}
