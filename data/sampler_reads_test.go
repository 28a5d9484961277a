package data

import (
	"context"
	"fmt"
	"reflect"
	"testing"
)

// TestLoaderReadsMatchTorch: a DataLoader over a seeded RandomSampler,
// read by a caller that said how many batches of each epoch it reads
// (WithBatchesRead), yields the batches torch's DataLoader gives such a
// loop, epoch after epoch: torch draws the sampler's permutations (or
// chunks of 32 indices) only when the loop reads into them, so an epoch
// read short of its end, or ending on a full batch, leaves the next
// epoch another order than a loop read to the sampler's end.
func TestLoaderReadsMatchTorch(t *testing.T) {
	g := readSamplerGoldens(t)
	if len(g.LoaderReads) == 0 {
		t.Fatal("no loader_reads goldens")
	}
	for _, c := range g.LoaderReads {
		name := fmt.Sprintf("n=%d,k=%d,repl=%t,bs=%d,drop=%t,limit=%d", c.N, c.NumSamples, c.Replacement, c.BatchSize, c.DropLast, c.Limit)
		t.Run(name, func(t *testing.T) {
			seed := c.Seed
			l := &DataLoader{Dataset: numbered(c.N), BatchSize: c.BatchSize, DropLast: c.DropLast,
				Sampler: RandomSampler{Replacement: c.Replacement, NumSamples: c.NumSamples, Seed: &seed}}
			ctx := WithBatchesRead(context.Background(), c.Limit)
			for epoch, want := range c.Epochs {
				var got [][]int
				for b, err := range l.Batches(ctx, epoch, 0) {
					if err != nil {
						t.Fatal(err)
					}
					if c.Limit >= 0 && len(got) == c.Limit {
						break
					}
					got = append(got, intLabels(t, []*Batch{b})[0])
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("epoch %d: %v\n want torch's %v", epoch, got, want)
				}
				// Resumed inside the epoch: the rest of the same batches.
				if len(want) > 1 {
					var rest [][]int
					for b, err := range l.Batches(ctx, epoch, 1) {
						if err != nil {
							t.Fatal(err)
						}
						if c.Limit >= 0 && len(rest)+1 == c.Limit {
							break
						}
						rest = append(rest, intLabels(t, []*Batch{b})[0])
					}
					if !reflect.DeepEqual(rest, want[1:]) {
						t.Errorf("epoch %d resumed at batch 1: %v, want %v", epoch, rest, want[1:])
					}
				}
			}
		})
	}
}
