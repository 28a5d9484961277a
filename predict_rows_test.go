package volt_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// TestPredictRows: one loader's predictions come back as one row per
// example, the rows PredictionRows reads from Predict's result; several
// loaders, or no batches, are errors saying what to call instead.
func TestPredictRows(t *testing.T) {
	one := &data.DataLoader{Dataset: regression(20, 3), BatchSize: 8}
	two := &data.DataLoader{Dataset: regression(4, 4), BatchSize: 8}
	for _, tc := range []struct {
		name    string
		cfg     volt.Config
		loaders []data.Loader
		wantErr string
	}{
		{name: "one loader", loaders: []data.Loader{one}},
		{name: "two loaders", loaders: []data.Loader{one, two}, wantErr: "provides 2: call Predict and volt.PredictionRows(preds[i])"},
		{name: "no batches", cfg: volt.Config{LimitPredictBatches: volt.Batches(0)}, loaders: []data.Loader{one}, wantErr: "PredictRows: volt.PredictionRows: volt.PredictionValues: no batches"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := volt.NewTrainer(quiet(tc.cfg))
			if err != nil {
				t.Fatal(err)
			}
			m, dm := &boring{}, volt.Loaders{Predict: tc.loaders}
			rows, err := tr.PredictRows(t.Context(), m, dm)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("PredictRows: %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			preds, err := tr.Predict(t.Context(), m, dm)
			if err != nil {
				t.Fatal(err)
			}
			want, err := volt.PredictionRows(preds[0])
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 20 || !reflect.DeepEqual(rows, want) {
				t.Errorf("PredictRows = %v (%d rows), want Predict's %v (20 rows)", rows, len(rows), want)
			}
		})
	}
}
