package data

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
)

// exampleRows returns, for each batch of l's epoch, one string per example:
// its flattened input and label.
func exampleRows(t *testing.T, ctx context.Context, l Loader, epoch int) [][]string {
	t.Helper()
	var out [][]string
	for b, err := range l.Batches(ctx, epoch, 0) {
		if err != nil {
			t.Fatal(err)
		}
		pixels := tensors.MustCopyFlatData[float32](b.Inputs[0])
		labels := labelsOf(t, b)
		per := len(pixels) / b.Size
		rows := make([]string, b.Size)
		for i := range rows {
			rows[i] = fmt.Sprint(pixels[i*per:(i+1)*per], labels[i])
		}
		out = append(out, rows)
	}
	return out
}

// TestShardUnionSeededDataset: for a SeededDataset with random crops and
// flips, one process's ShardUnion batch k is the ranks' batches k joined,
// augmentations included: the examples get the seed the ranks' loaders
// give them (the loader's Seed; without one, the seed of the context, as
// the trainer sets each rank's Seed from the seed it puts in the context).
func TestShardUnionSeededDataset(t *testing.T) {
	root := writeImageFolder(t, 5, 14, 12)
	const replicas = 2
	for _, tc := range []struct {
		name      string
		loaderSet bool   // the loader has its own Seed (7); else the context's (9) is used
		ctxSeed   uint64 // carried by the context
	}{
		{"loader seed", true, 3},
		{"context seed", false, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := WithSeed(t.Context(), tc.ctxSeed)
			loader := augmentedLoader(t, root, 2, 7)
			if !tc.loaderSet {
				loader.Seed = nil
			}
			// Each rank's loader as volt.Trainer builds it: its own Seed,
			// else the trainer's seed.
			rankLoader := *loader
			if rankLoader.Seed == nil {
				seed := tc.ctxSeed
				rankLoader.Seed = &seed
			}
			u := &ShardUnion{Loader: loader, Replicas: replicas}
			for epoch := range 2 {
				var want [][]string
				for r := range replicas {
					s := &Sharded{Loader: &rankLoader, Rank: r, Replicas: replicas}
					for k, rows := range exampleRows(t, ctx, s, epoch) {
						if k == len(want) {
							want = append(want, nil)
						}
						want[k] = append(want[k], rows...)
					}
				}
				if got := exampleRows(t, ctx, u, epoch); !reflect.DeepEqual(got, want) {
					t.Errorf("epoch %d: the union's batches are not the ranks' batches joined (%d and %d batches)", epoch, len(got), len(want))
				}
			}
		})
	}
}
