package main

import (
	"fmt"
	"time"

	"github.com/voltml/volt/dist"
)

// mlpParams are the parameter sizes of the MNIST MLP 784-256-256-10
// (weights and biases), whose gradients a data-parallel step all-reduces.
var mlpParams = []int{784 * 256, 256, 256 * 256, 256, 256 * 10, 10}

// bench times iters all-reduces (sum, float32) of the MLP's gradients in
// several layouts and prints one "BENCH name round=k ... ns_per_step=t" line
// per layout and round on rank 0. Each layout is timed after a warm-up and
// between barriers, in each of the rounds.
func bench(g dist.Group, iters int) error {
	total := 0
	for _, n := range mlpParams {
		total += n
	}
	flat := make([]float32, total)
	for i := range flat {
		flat[i] = float32(i%13) * 0.25
	}
	layouts := []struct {
		name  string
		parts []int
	}{
		{"one_call", []int{total}},
		{"per_tensor", mlpParams},
		{"buckets_256KiB", buckets(total, 256<<10/4)},
		{"buckets_64KiB", buckets(total, 64<<10/4)},
		{"one_float", []int{1}},
	}
	for round := range rounds {
		for _, l := range layouts {
			if err := benchLayout(g, flat, l.name, l.parts, iters, round); err != nil {
				return err
			}
		}
	}
	return nil
}

// rounds is how many times bench times every layout, in turn, so that a
// layout's figure does not depend on its place in the sequence.
const rounds = 3

// benchLayout times iters all-reduces of flat split into parts and prints
// rank 0's line for round.
func benchLayout(g dist.Group, flat []float32, name string, parts []int, iters, round int) error {
	run := func(k int) error {
		for range k {
			off := 0
			for _, n := range parts {
				if err := g.AllReduceFloat32(flat[off:off+n], dist.Sum); err != nil {
					return err
				}
				off += n
			}
		}
		return nil
	}
	if err := run(max(1, iters/10)); err != nil {
		return err
	}
	if err := g.Barrier(); err != nil {
		return err
	}
	start := time.Now()
	if err := run(iters); err != nil {
		return err
	}
	elapsed := time.Since(start)
	if err := g.Barrier(); err != nil {
		return err
	}
	if g.Rank() == 0 {
		fmt.Printf("BENCH %s round=%d calls=%d floats=%d ns_per_step=%d\n",
			name, round, len(parts), sum(parts), elapsed.Nanoseconds()/int64(iters))
	}
	return nil
}

// buckets splits total elements into pieces of at most size.
func buckets(total, size int) []int {
	var parts []int
	for total > 0 {
		n := min(total, size)
		parts = append(parts, n)
		total -= n
	}
	return parts
}

// sum adds up parts.
func sum(parts []int) int {
	s := 0
	for _, n := range parts {
		s += n
	}
	return s
}
