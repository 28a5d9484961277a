package data

// Datasets is Lightning's LightningDataModule.from_datasets as a value a
// data module embeds: it supplies the loaders over the datasets its Setup
// assigns, so the module itself writes only Setup.
//
//	type Regression struct {
//		N int
//		data.Datasets
//	}
//
//	func (d *Regression) Setup(volt.Stage) error {
//		d.Train, d.Val = ... // data.Rows(...), a Slice of it, any Dataset
//		return nil
//	}
//
//	dm := &Regression{N: 2000, Datasets: data.Datasets{BatchSize: 32}}
//
// Its methods have volt's data-module signatures (volt.TrainDataloader,
// volt.ValDataloaders, volt.TestDataloaders, volt.PredictDataloaders): the
// type lives in package data, which volt imports, and satisfies volt's
// interfaces by their method sets alone. Each loader is a [DataLoader] over
// the dataset with BatchSize and Workers; the training loader shuffles, as
// from_datasets' does. A nil dataset gives no loader, as an unset dataset
// leaves from_datasets' hook unset: Fit without Train is an error naming
// the missing training loader, Fit without Val trains without validation,
// Test and Predict without theirs are errors. A method the embedding
// module defines itself (ValDataloaders over two datasets, say) takes the
// place of the one Datasets supplies.
type Datasets struct {
	// Train, Val, Test and Predict are the datasets of each stage; nil means
	// none. Data, not configuration: the tag keeps them out of a data
	// module's volt.HParamsOf and of package cli's options.
	Train, Val, Test, Predict Dataset `volt:"-"`
	// BatchSize is every loader's batch size (DataLoader.BatchSize: 0 means
	// 1, from_datasets' default).
	BatchSize int
	// Workers is every loader's DataLoader.Workers (from_datasets'
	// num_workers): 0 builds batches inline.
	Workers int
}

// TrainDataloader returns a shuffling DataLoader over Train, or nil when
// Train is nil.
func (d Datasets) TrainDataloader() Loader {
	if d.Train == nil {
		return nil
	}
	return d.loader(d.Train, true)
}

// ValDataloaders returns one DataLoader over Val, or none when Val is nil.
func (d Datasets) ValDataloaders() []Loader { return d.loaders(d.Val) }

// TestDataloaders returns one DataLoader over Test, or none when Test is nil.
func (d Datasets) TestDataloaders() []Loader { return d.loaders(d.Test) }

// PredictDataloaders returns one DataLoader over Predict, or none when
// Predict is nil.
func (d Datasets) PredictDataloaders() []Loader { return d.loaders(d.Predict) }

// loaders is the one unshuffled loader over ds, or none for a nil ds.
func (d Datasets) loaders(ds Dataset) []Loader {
	if ds == nil {
		return nil
	}
	return []Loader{d.loader(ds, false)}
}

// loader is a DataLoader over ds with d's batch size and workers.
func (d Datasets) loader(ds Dataset, shuffle bool) *DataLoader {
	return &DataLoader{Dataset: ds, BatchSize: d.BatchSize, Workers: d.Workers, Shuffle: shuffle}
}
