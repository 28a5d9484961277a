package main

import (
	"fmt"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/datasets/mnist"
)

// MNIST is the data module: the 60000 training images less the last
// ValImages for training, those for validation, the 10000 test images for
// testing and prediction. The images are loaded at Setup.
type MNIST struct {
	BatchSize int `help:"images per batch"`
	Workers   int `help:"goroutines preparing batches"`
	ValImages int `help:"training images held out for validation"`

	train, val, test data.Dataset
}

// newMNIST returns the data module with its defaults: batches of 64, two
// workers, 5000 validation images.
func newMNIST() *MNIST { return &MNIST{BatchSize: 64, Workers: 2, ValImages: 5000} }

// Validate checks the fields after the config is read.
func (d *MNIST) Validate() error {
	if d.BatchSize < 1 || d.Workers < 0 || d.ValImages < 1 || d.ValImages >= 60000 {
		return fmt.Errorf("batch_size must be >= 1, workers >= 0, val_images in [1, 60000), got %d, %d, %d", d.BatchSize, d.Workers, d.ValImages)
	}
	return nil
}

// Setup implements volt.DataSetup: it loads MNIST once.
func (d *MNIST) Setup(volt.Stage) error {
	if d.train != nil {
		return nil
	}
	train, test, err := mnist.Load()
	if err != nil {
		return err
	}
	split := train.Len() - d.ValImages
	d.train, d.val, d.test = train.Subset(0, split), train.Subset(split, train.Len()), test
	return nil
}

// loader batches ds.
func (d *MNIST) loader(ds data.Dataset, shuffle bool) data.Loader {
	return &data.DataLoader{Dataset: ds, BatchSize: d.BatchSize, Shuffle: shuffle, Workers: d.Workers}
}

// TrainDataloader implements volt.TrainDataloader.
func (d *MNIST) TrainDataloader() data.Loader { return d.loader(d.train, true) }

// ValDataloaders implements volt.ValDataloaders.
func (d *MNIST) ValDataloaders() []data.Loader { return []data.Loader{d.loader(d.val, false)} }

// TestDataloaders implements volt.TestDataloaders.
func (d *MNIST) TestDataloaders() []data.Loader { return []data.Loader{d.loader(d.test, false)} }

// PredictDataloaders implements volt.PredictDataloaders.
func (d *MNIST) PredictDataloaders() []data.Loader { return d.TestDataloaders() }

// Interface guards.
var (
	_ volt.DataSetup       = (*MNIST)(nil)
	_ volt.TrainDataloader = (*MNIST)(nil)
	_ volt.ValDataloaders  = (*MNIST)(nil)
	_ volt.TestDataloaders = (*MNIST)(nil)
)
