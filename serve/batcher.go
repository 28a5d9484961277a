package serve

import "time"

// job is one request waiting in the batcher.
type job struct {
	rows [][]float64
	done chan result
}

// result is a job's outputs, one per row, or the error of its batch.
type result struct {
	outs []any
	err  error
}

// batcher collects jobs into batches of at most MaxBatch rows (or what
// arrived within Wait of the first) and runs each with one Predict call.
// A job that would overflow the batch starts the next one.
func (h *Handler) batcher() {
	defer close(h.stopped)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var held *job // the job that did not fit the last batch
	for {
		var first job
		if held != nil {
			first, held = *held, nil
		} else {
			j, ok := <-h.jobs
			if !ok {
				return
			}
			first = j
		}
		batch, rows := []job{first}, len(first.rows)
		timer.Reset(h.cfg.Wait)
		open := true
	collect:
		for rows < h.cfg.MaxBatch {
			select {
			case j, ok := <-h.jobs:
				if !ok {
					open = false
					break collect
				}
				if rows+len(j.rows) > h.cfg.MaxBatch {
					held = &j
					break collect
				}
				batch, rows = append(batch, j), rows+len(j.rows)
			case <-timer.C:
				break collect
			}
		}
		timer.Stop()
		h.runBatch(batch)
		if !open && held == nil {
			return
		}
	}
}

// runBatch predicts the jobs' rows in one call and answers each job.
func (h *Handler) runBatch(batch []job) {
	var rows [][]float64
	counts := make([]int, len(batch))
	for i, j := range batch {
		rows = append(rows, j.rows...)
		counts[i] = len(j.rows)
	}
	for i, res := range h.run(rows, counts) {
		batch[i].done <- res
	}
}
