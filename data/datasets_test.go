package data_test

import (
	"testing"

	"github.com/voltml/volt/data"
)

// TestDatasets: each stage's loader is a DataLoader over that stage's
// dataset with the batch size and workers, shuffling for training only
// (from_datasets' loaders), and a nil dataset gives no loader.
func TestDatasets(t *testing.T) {
	train, val, test, predict := make(data.Slice, 5), make(data.Slice, 4), make(data.Slice, 3), make(data.Slice, 2)
	full := data.Datasets{Train: train, Val: val, Test: test, Predict: predict, BatchSize: 2, Workers: 3}
	for _, tc := range []struct {
		name    string
		d       data.Datasets
		loaders func(data.Datasets) []data.Loader
		want    data.Dataset // nil: no loader
		shuffle bool
	}{
		{"train", full, func(d data.Datasets) []data.Loader { return nonNil(d.TrainDataloader()) }, train, true},
		{"val", full, data.Datasets.ValDataloaders, val, false},
		{"test", full, data.Datasets.TestDataloaders, test, false},
		{"predict", full, data.Datasets.PredictDataloaders, predict, false},
		{"no train", data.Datasets{Val: val}, func(d data.Datasets) []data.Loader { return nonNil(d.TrainDataloader()) }, nil, false},
		{"no val", data.Datasets{Train: train}, data.Datasets.ValDataloaders, nil, false},
		{"no test", data.Datasets{Train: train}, data.Datasets.TestDataloaders, nil, false},
		{"no predict", data.Datasets{Train: train}, data.Datasets.PredictDataloaders, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.loaders(tc.d)
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("loaders %v, want none", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("%d loaders, want 1", len(got))
			}
			dl, ok := got[0].(*data.DataLoader)
			if !ok {
				t.Fatalf("loader %T, want *data.DataLoader", got[0])
			}
			if dl.Dataset.Len() != tc.want.Len() || dl.BatchSize != tc.d.BatchSize || dl.Workers != tc.d.Workers || dl.Shuffle != tc.shuffle {
				t.Errorf("loader over %d examples, batch %d, workers %d, shuffle %v; want %d, %d, %d, %v",
					dl.Dataset.Len(), dl.BatchSize, dl.Workers, dl.Shuffle, tc.want.Len(), tc.d.BatchSize, tc.d.Workers, tc.shuffle)
			}
			if err := dl.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

// nonNil is l as a list, empty for a nil l.
func nonNil(l data.Loader) []data.Loader {
	if l == nil {
		return nil
	}
	return []data.Loader{l}
}
