package volt_test

import (
	"iter"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// noExamples is a streaming dataset that yields nothing.
type noExamples struct{}

func (noExamples) Iter(int) iter.Seq2[data.Example, error] {
	return func(func(data.Example, error) bool) {}
}

// TestFitRejectsEmptyTrainingSet: an empty training set is an error that
// says which loader is empty, not a silent success with 0 steps; turning
// training off on purpose (LimitTrainBatches=Batches(0)) stays allowed.
func TestFitRejectsEmptyTrainingSet(t *testing.T) {
	tests := []struct {
		name    string
		train   data.Loader
		limit   volt.BatchLimit
		wantErr []string // substrings; none: success
	}{
		{"empty dataset", &data.DataLoader{Dataset: data.Slice{}, BatchSize: 4},
			nil, []string{"training loader", "no batches", "0 examples"}},
		{"fewer examples than a batch, DropLast", &data.DataLoader{Dataset: regression(3, 1), BatchSize: 4, DropLast: true},
			nil, []string{"training loader", "no batches", "3 examples", "DropLast"}},
		{"empty stream", &data.DataLoader{Iterable: noExamples{}, BatchSize: 4},
			nil, []string{"training loader", "no batches", "epoch 0"}},
		{"training off on purpose", &data.DataLoader{Dataset: regression(8, 1), BatchSize: 4},
			volt.Batches(0), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1, LimitTrainBatches: tc.limit}))
			err := tr.Fit(t.Context(), &boring{}, volt.Loaders{Train: tc.train})
			switch {
			case len(tc.wantErr) == 0 && err != nil:
				t.Fatalf("Fit: %v, want success", err)
			case len(tc.wantErr) > 0 && err == nil:
				t.Fatalf("Fit succeeded (global step %d), want an error saying the training loader is empty", tr.GlobalStep())
			}
			if err != nil {
				t.Log(err)
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}
