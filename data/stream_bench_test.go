package data

import (
	"context"
	"testing"
)

// BenchmarkStreamResume resumes a stream of 10⁶ examples at its last batch
// (of 1000): "state" from the batch before's StreamState, "replay" reading
// and discarding the 999 batches before it, as a stream without State does.
func BenchmarkStreamResume(b *testing.B) {
	const n, bs = 1_000_000, 1000
	skip := n/bs - 1
	// The position after batch skip-1, as a full pass records it.
	var state []byte
	for batch, err := range (&DataLoader{Iterable: &positionStream{n: n}, BatchSize: bs}).Batches(context.Background(), 0, skip-1) {
		if err != nil {
			b.Fatal(err)
		}
		state = batch.StreamState
		break
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
	}{
		{"state", WithStreamState(context.Background(), 0, skip, state)},
		{"replay", context.Background()},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				got := 0
				for _, err := range (&DataLoader{Iterable: &positionStream{n: n}, BatchSize: bs}).Batches(tc.ctx, 0, skip) {
					if err != nil {
						b.Fatal(err)
					}
					got++
				}
				if got != 1 {
					b.Fatalf("resumed at batch %d: %d batches, want 1", skip, got)
				}
			}
		})
	}
}
