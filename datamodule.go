package volt

import "github.com/voltml/volt/data"

// DataModule is any value that provides loaders through one or more of
// TrainDataloader, ValDataloaders, TestDataloaders and PredictDataloaders,
// and optionally takes part in the run with DataPreparer, DataSetup and
// DataTeardown (Lightning's LightningDataModule). Loaders is the simplest one.
type DataModule any

// TrainDataloader provides the training loader (required by Fit).
type TrainDataloader interface{ TrainDataloader() data.Loader }

// ValDataloaders provides the validation loaders.
type ValDataloaders interface{ ValDataloaders() []data.Loader }

// TestDataloaders provides the test loaders.
type TestDataloaders interface{ TestDataloaders() []data.Loader }

// PredictDataloaders provides the prediction loaders.
type PredictDataloaders interface{ PredictDataloaders() []data.Loader }

// DataPreparer downloads or prepares data once, before DataSetup.
type DataPreparer interface{ PrepareData() error }

// DataSetup is called at the start of each run, before the loaders are asked for.
type DataSetup interface{ Setup(stage Stage) error }

// DataTeardown is called at the end of each run.
type DataTeardown interface{ Teardown(stage Stage) error }

// Loaders is a DataModule made of loaders given directly.
type Loaders struct {
	Train   data.Loader
	Val     []data.Loader
	Test    []data.Loader
	Predict []data.Loader
}

// TrainDataloader implements TrainDataloader.
func (l Loaders) TrainDataloader() data.Loader { return l.Train }

// ValDataloaders implements ValDataloaders.
func (l Loaders) ValDataloaders() []data.Loader { return l.Val }

// TestDataloaders implements TestDataloaders.
func (l Loaders) TestDataloaders() []data.Loader { return l.Test }

// PredictDataloaders implements PredictDataloaders.
func (l Loaders) PredictDataloaders() []data.Loader { return l.Predict }

// Interface guards.
var (
	_ TrainDataloader    = Loaders{}
	_ ValDataloaders     = Loaders{}
	_ TestDataloaders    = Loaders{}
	_ PredictDataloaders = Loaders{}
)
