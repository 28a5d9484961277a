package testutil

import (
	"fmt"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// BoringDataModule is BoringData as a data module whose sizes are fields (a
// config's data section): Examples shuffled training examples in batches
// of BatchSize, 16 validation examples in one batch, 16 test and predict
// examples in batches of 8.
type BoringDataModule struct {
	BatchSize int `help:"training batch size"`
	Examples  int `help:"number of training examples"`
}

// NewBoringDataModule returns the data module of BoringData: 64 examples
// in batches of 16.
func NewBoringDataModule() *BoringDataModule { return &BoringDataModule{BatchSize: 16, Examples: 64} }

// Validate checks the sizes.
func (d *BoringDataModule) Validate() error {
	if d.BatchSize < 1 || d.Examples < 1 {
		return fmt.Errorf("batch_size and examples must be >= 1, got %d and %d", d.BatchSize, d.Examples)
	}
	return nil
}

// TrainDataloader implements volt.TrainDataloader.
func (d *BoringDataModule) TrainDataloader() data.Loader {
	return &data.DataLoader{Dataset: Regression(d.Examples, 1), BatchSize: d.BatchSize, Shuffle: true}
}

// ValDataloaders implements volt.ValDataloaders.
func (d *BoringDataModule) ValDataloaders() []data.Loader {
	return []data.Loader{&data.DataLoader{Dataset: Regression(16, 2), BatchSize: 16}}
}

// TestDataloaders implements volt.TestDataloaders.
func (d *BoringDataModule) TestDataloaders() []data.Loader {
	return []data.Loader{&data.DataLoader{Dataset: Regression(16, 3), BatchSize: 8}}
}

// PredictDataloaders implements volt.PredictDataloaders.
func (d *BoringDataModule) PredictDataloaders() []data.Loader { return d.TestDataloaders() }

// Interface guards.
var (
	_ volt.TrainDataloader    = (*BoringDataModule)(nil)
	_ volt.ValDataloaders     = (*BoringDataModule)(nil)
	_ volt.TestDataloaders    = (*BoringDataModule)(nil)
	_ volt.PredictDataloaders = (*BoringDataModule)(nil)
)
