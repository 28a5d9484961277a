package data_test

import (
	"context"
	"fmt"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/data"
)

// exNumbers returns n examples whose one input is the number i.
func exNumbers(n int) data.Slice {
	out := make(data.Slice, n)
	for i := range out {
		out[i] = data.Example{Inputs: []data.Field{{Value: int32(i)}}}
	}
	return out
}

// exValues returns a batch's first input as a Go slice.
func exValues(b *data.Batch) []int32 { return tensors.MustCopyFlatData[int32](b.Inputs[0]) }

// A DataLoader batches a dataset (a data.Slice here), shuffled with a seed
// each epoch: the order depends on the seed and the epoch only, not on
// Workers.
func ExampleDataLoader() {
	seed := uint64(7)
	loader := &data.DataLoader{Dataset: exNumbers(10), BatchSize: 4, Shuffle: true, Seed: &seed, Workers: 2}
	fmt.Println("batches per epoch:", loader.NumBatches())
	for epoch := range 2 {
		var batches [][]int32
		for b, err := range loader.Batches(context.Background(), epoch, 0) {
			if err != nil {
				panic(err)
			}
			batches = append(batches, exValues(b))
		}
		fmt.Println("epoch", epoch, batches)
	}
	// Output:
	// batches per epoch: 3
	// epoch 0 [[0 8 6 4] [3 5 7 1] [9 2]]
	// epoch 1 [[5 0 3 4] [9 2 1 8] [7 6]]
}

// A CombinedLoader walks several loaders together. In MaxSizeCycle mode
// (the default) each batch holds one batch of every loader, the shorter
// ones starting over until the longest is done; Part gives one back.
func ExampleCombinedLoader() {
	combined := &data.CombinedLoader{
		Loaders: []data.Loader{
			&data.DataLoader{Dataset: exNumbers(6), BatchSize: 2},
			&data.DataLoader{Dataset: exNumbers(2), BatchSize: 1},
		},
		Names: []string{"big", "small"},
	}
	if err := combined.Validate(); err != nil {
		panic(err)
	}
	fmt.Println("batches:", combined.NumBatches())
	for b, err := range combined.Batches(context.Background(), 0, 0) {
		if err != nil {
			panic(err)
		}
		fmt.Println("big", exValues(b.Part("big")), "small", exValues(b.Part("small")))
	}
	// Output:
	// batches: 3
	// big [0 1] small [0]
	// big [2 3] small [1]
	// big [4 5] small [0]
}

// In Sequential mode the loaders' batches come one loader after the other,
// each batch saying which loader it came from.
func ExampleCombinedLoader_sequential() {
	combined := &data.CombinedLoader{
		Loaders: []data.Loader{
			&data.DataLoader{Dataset: exNumbers(4), BatchSize: 2},
			&data.DataLoader{Dataset: exNumbers(2), BatchSize: 2},
		},
		Mode: data.Sequential,
	}
	for b, err := range combined.Batches(context.Background(), 0, 0) {
		if err != nil {
			panic(err)
		}
		fmt.Println("loader", b.DataloaderIdx, exValues(b))
	}
	// Output:
	// loader 0 [0 1]
	// loader 0 [2 3]
	// loader 1 [0 1]
}
