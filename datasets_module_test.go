package volt_test

import (
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// datasetsModule is a data module that writes only Setup: data.Datasets,
// embedded, supplies its loaders.
type datasetsModule struct {
	data.Datasets
	noVal, noTrain bool
}

func (d *datasetsModule) Setup(volt.Stage) error {
	if !d.noTrain {
		d.Train = regression(64, 1)
	}
	if !d.noVal {
		d.Val = regression(16, 2)
	}
	d.Predict = regression(24, 3)
	return nil
}

// TestDatasetsEmbedded: the trainer finds the loaders of an embedded
// data.Datasets (filled in by Setup) for Fit and Predict; without Val, Fit
// trains without validation; without Train, Fit names the missing loader.
func TestDatasetsEmbedded(t *testing.T) {
	for _, tc := range []struct {
		name           string
		dm             *datasetsModule
		wantValBatches int64
		wantErr        string
	}{
		{name: "train and val", dm: &datasetsModule{Datasets: data.Datasets{BatchSize: 16}}, wantValBatches: 1},
		{name: "no val", dm: &datasetsModule{Datasets: data.Datasets{BatchSize: 16}, noVal: true}},
		{name: "no train", dm: &datasetsModule{noTrain: true}, wantErr: "Fit needs a training loader"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := testutil.FitErr(t, quiet(volt.Config{MaxEpochs: 1}), &boring{}, tc.dm)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Fit: %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tr.Progress().TrainBatch.Total.Completed; got != 4 {
				t.Errorf("%d training batches, want 4 (64 examples in batches of 16)", got)
			}
			if got := tr.Progress().ValBatch.Total.Completed; got != tc.wantValBatches {
				t.Errorf("%d validation batches, want %d", got, tc.wantValBatches)
			}
			preds, err := tr.Predict(t.Context(), &boring{}, tc.dm)
			if err != nil {
				t.Fatal(err)
			}
			if len(preds) != 1 || len(preds[0]) != 2 {
				t.Errorf("predictions of %d loaders (first: %d batches), want 1 loader of 2 batches", len(preds), len(preds[0]))
			}
		})
	}
}
