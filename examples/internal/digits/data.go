package digits

import (
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/datasets/mnist"
)

// Loaders returns the examples' MNIST split: training on the first 55000
// training images (shuffled), validation on the last 5000, test on the
// test set, in batches of batch prepared by workers goroutines.
func Loaders(batch, workers int) (volt.Loaders, error) {
	train, test, err := mnist.Load()
	if err != nil {
		return volt.Loaders{}, err
	}
	loader := func(ds data.Dataset, shuffle bool) *data.DataLoader {
		return &data.DataLoader{Dataset: ds, BatchSize: batch, Shuffle: shuffle, Workers: workers}
	}
	return volt.Loaders{
		Train: loader(train.Subset(0, 55000), true),
		Val:   []data.Loader{loader(train.Subset(55000, 60000), false)},
		Test:  []data.Loader{loader(test, false)},
	}, nil
}

// First returns the first n examples of ds, for Trainer.Predict to
// predict.
func First(ds data.Dataset, n int) (data.Slice, error) {
	first := make(data.Slice, n)
	for i := range first {
		ex, err := ds.Get(i)
		if err != nil {
			return nil, err
		}
		first[i] = ex
	}
	return first, nil
}
