package callback_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// flat returns a prediction tensor's values as float64s.
func flat(t *testing.T, x *tensors.Tensor) []float64 {
	t.Helper()
	var out []float64
	x.MustConstFlatData(func(f any) {
		for _, v := range f.([]float32) {
			out = append(out, float64(v))
		}
	})
	return out
}

func readJSON[T any](t *testing.T, path string) T {
	t.Helper()
	var v T
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

func TestPredictionWriter(t *testing.T) {
	tests := []struct {
		interval               string
		wantBatches, wantEpoch bool
	}{
		{"", true, false},
		{"batch", true, false},
		{"epoch", false, true},
		{"both", true, true},
	}
	for _, tc := range tests {
		t.Run("interval "+tc.interval, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			w := callback.NewPredictionWriter(callback.PredictionWriterConfig{Dir: dir, WriteInterval: tc.interval})
			dm := boringData()
			dm.Predict = []data.Loader{dm.Predict[0], &data.DataLoader{Dataset: regression(5, 4), BatchSize: 5}}
			tr := testutil.NewTrainer(t, quiet(volt.Config{Callbacks: []volt.Callback{w}}))
			preds, err := tr.Predict(t.Context(), &boring{}, dm)
			if err != nil {
				t.Fatal(err)
			}
			var epoch callback.EpochPredictions
			if tc.wantEpoch {
				epoch = readJSON[callback.EpochPredictions](t, w.EpochFile())
				if len(epoch.Dataloaders) != len(preds) {
					t.Fatalf("epoch file has %d loaders, want %d", len(epoch.Dataloaders), len(preds))
				}
			} else if _, err := os.Stat(w.EpochFile()); !os.IsNotExist(err) {
				t.Errorf("epoch file written with interval %q", tc.interval)
			}
			for dl, batches := range preds {
				if tc.wantEpoch && len(epoch.Dataloaders[dl]) != len(batches) {
					t.Fatalf("loader %d: epoch file has %d batches, want %d", dl, len(epoch.Dataloaders[dl]), len(batches))
				}
				for i, want := range batches {
					check := func(where string, p callback.Prediction) {
						if !slices.Equal(p.Shape, want.Shape().Dimensions) || p.DType != "Float32" || !slices.Equal(p.Values, flat(t, want)) ||
							p.DataloaderIdx != dl || p.BatchIdx != i {
							t.Errorf("%s: loader %d batch %d: got %+v, want shape %v values %v", where, dl, i, p, want.Shape().Dimensions, flat(t, want))
						}
					}
					path := w.BatchFile(dl, i)
					if tc.wantBatches {
						check(path, readJSON[callback.Prediction](t, path))
					} else if _, err := os.Stat(path); !os.IsNotExist(err) {
						t.Errorf("%s written with interval %q", path, tc.interval)
					}
					if tc.wantEpoch {
						check("epoch file", epoch.Dataloaders[dl][i])
					}
				}
			}
			if filepath.Base(w.BatchFile(1, 0)) != "batch_1_0.json" {
				t.Errorf("batch file name %s", w.BatchFile(1, 0))
			}
		})
	}
}

func TestPredictionJSONNonFinite(t *testing.T) {
	in := callback.Prediction{Shape: []int{3}, DType: "Float32", Values: []float64{1, math.Inf(-1), math.NaN()}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out callback.Prediction
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Values[0] != 1 || !math.IsInf(out.Values[1], -1) || !math.IsNaN(out.Values[2]) {
		t.Errorf("round trip of %s gave %v", b, out.Values)
	}
}

func TestPredictionWriterConfigErrors(t *testing.T) {
	err := callback.NewPredictionWriter(callback.PredictionWriterConfig{WriteInterval: "step"}).Validate()
	if err == nil || !strings.Contains(err.Error(), `PredictionWriterConfig.WriteInterval: unknown "step"; valid: "batch", "epoch", "both"`) {
		t.Errorf("error = %v", err)
	}
}
