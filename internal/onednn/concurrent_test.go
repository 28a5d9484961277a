package onednn

import (
	"slices"
	"sync"
	"testing"
)

// TestConcurrentConvolutions runs two different convolutions (each
// direction) from three goroutines at once (two share the first
// convolution's cached primitives), many times, and checks every
// result against the same call made alone: each execution has its own
// scratchpad, so concurrent calls must not disturb each other's bits.
func TestConcurrentConvolutions(t *testing.T) {
	requireLibrary(t)
	convs := []Conv{
		{Batch: 8, InChannels: 16, Height: 14, Width: 14, OutChannels: 32, KernelHeight: 3, KernelWidth: 3,
			Strides: [2]int{2, 2}, PadLow: [2]int{1, 1}, PadHigh: [2]int{1, 1}, Threads: 1},
		{Batch: 4, InChannels: 8, Height: 20, Width: 20, OutChannels: 8, KernelHeight: 5, KernelWidth: 5,
			PadLow: [2]int{2, 2}, PadHigh: [2]int{2, 2}, Threads: 1, Format: FormatBlocked},
	}
	dirs := []direction{directionForward, directionBackwardData, directionBackwardWeights}
	want := make([][][]float32, len(convs))
	for i, c := range convs {
		for _, dir := range dirs {
			want[i] = append(want[i], runDirection(t, c, dir, uint64(i)))
		}
	}
	// The first results must themselves be right.
	for i, c := range convs {
		checkCase(t, c.normalized(), uint64(100+i))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 3 {
		i := g % len(convs)
		c := convs[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				for d, dir := range dirs {
					if got := runDirection(t, c, dir, uint64(i)); !slices.Equal(got, want[i][d]) {
						errs <- dir.String()
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("a concurrent %s call gave other bits than the same call alone", e)
	}
}
