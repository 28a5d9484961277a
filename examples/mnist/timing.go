package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// processStart approximates the process start: package initialisation.
var processStart = time.Now()

// stepClock records when each training batch ends, for -timing.
type stepClock struct {
	ends  []time.Time // end of each training batch, in order
	steps []float64   // seconds between two batch ends in the same epoch with no validation between
	valid bool        // the last end is followed by no validation yet
}

// OnTrainBatchEnd implements volt.OnTrainBatchEnd.
func (c *stepClock) OnTrainBatchEnd(*volt.Trainer, *volt.StepOutput, *data.Batch, int) error {
	now := time.Now()
	if c.valid {
		c.steps = append(c.steps, now.Sub(c.ends[len(c.ends)-1]).Seconds())
	}
	c.ends = append(c.ends, now)
	c.valid = true
	return nil
}

// OnTrainEpochStart implements volt.OnTrainEpochStart: no step spans two epochs.
func (c *stepClock) OnTrainEpochStart(*volt.Trainer) error { c.valid = false; return nil }

// OnValidationStart implements volt.OnValidationStart: no step spans a validation.
func (c *stepClock) OnValidationStart(*volt.Trainer) error { c.valid = false; return nil }

// report writes the timing line: first_step_s (process start to the end of
// the first training step, compilation included), step_us (median time
// between two consecutive training batch ends), steps (how many such
// intervals), in a data-parallel run allreduce_us, allreduce_mean_us and
// allreduces (the median and mean time of a gradient all-reduce after the
// first, packing and waiting for the other ranks included, and their
// number), exchange_us (the median of the fastest rank's time: the
// all-reduce without waiting, DistributedStats.Exchange), and
// wall_s (process start to now).
func (c *stepClock) report(w io.Writer, stats volt.DistributedStats) {
	first, median := 0.0, 0.0
	if len(c.ends) > 0 {
		first = c.ends[0].Sub(processStart).Seconds()
	}
	if n := len(c.steps); n > 0 {
		s := slices.Sorted(slices.Values(c.steps))
		median = (s[(n-1)/2] + s[n/2]) / 2
	}
	comm := ""
	if stats.AllReduces > 1 {
		// The first all-reduce also waits for the slowest rank's compilation.
		rest := stats.Time - stats.FirstTime
		comm = fmt.Sprintf(" allreduce_us=%.1f allreduce_mean_us=%.1f exchange_us=%.1f allreduces=%d", float64(stats.Median.Nanoseconds())/1e3,
			float64(rest.Microseconds())/float64(stats.AllReduces-1), float64(stats.Exchange.Nanoseconds())/1e3, stats.AllReduces)
	}
	fmt.Fprintf(w, "timing: first_step_s=%.3f step_us=%.1f steps=%d%s wall_s=%.3f\n",
		first, median*1e6, len(c.steps), comm, time.Since(processStart).Seconds())
}

var (
	_ volt.OnTrainBatchEnd   = (*stepClock)(nil)
	_ volt.OnTrainEpochStart = (*stepClock)(nil)
	_ volt.OnValidationStart = (*stepClock)(nil)
)
