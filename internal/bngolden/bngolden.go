// Package bngolden reads PyTorch's BatchNorm goldens
// (testdata/batchnorm/goldens.json, written by testdata/batchnorm/gen.py)
// for the tests of the batch normalization lowering and layer.
package bngolden

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Case is one case of testdata/batchnorm/goldens.json: a PyTorch
// BatchNorm1d/2d module (channels on axis 1) trained for a few passes, then
// run once in eval mode. Tensors are flat, row-major, in Shape.
type Case struct {
	Name        string
	Shape       []int
	FeatureAxis int      `json:"feature_axis"`
	Eps         float64  // PyTorch's eps
	Momentum    *float64 // nil: PyTorch's momentum=None (cumulative average)
	Affine      bool
	Weight      []float32 // absent when not Affine (ones)
	Bias        []float32 // absent when not Affine (zeros)
	Steps       []Step
	Eval        struct{ X, Y []float32 }
}

// Step is one training pass of a Case: the loss is
// sum(Y * GradY).
type Step struct {
	X, GradY, Y, GradX   []float32
	GradWeight, GradBias []float32
	BatchMean, BatchVar  []float32 // the batch's mean and biased variance
	RunningMean          []float32 `json:"running_mean"`
	RunningVar           []float32 `json:"running_var"` // PyTorch's: updated with the unbiased variance
	NumBatchesTracked    int64     `json:"num_batches_tracked"`
}

// UnmarshalJSON maps the generator's snake_case names.
func (s *Step) UnmarshalJSON(data []byte) error {
	var raw struct {
		X           []float32 `json:"x"`
		GradY       []float32 `json:"grad_y"`
		Y           []float32 `json:"y"`
		GradX       []float32 `json:"grad_x"`
		GradWeight  []float32 `json:"grad_weight"`
		GradBias    []float32 `json:"grad_bias"`
		BatchMean   []float32 `json:"batch_mean"`
		BatchVar    []float32 `json:"batch_var"`
		RunningMean []float32 `json:"running_mean"`
		RunningVar  []float32 `json:"running_var"`
		Tracked     int64     `json:"num_batches_tracked"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*s = Step{X: raw.X, GradY: raw.GradY, Y: raw.Y, GradX: raw.GradX, GradWeight: raw.GradWeight,
		GradBias: raw.GradBias, BatchMean: raw.BatchMean, BatchVar: raw.BatchVar, RunningMean: raw.RunningMean,
		RunningVar: raw.RunningVar, NumBatchesTracked: raw.Tracked}
	return nil
}

// Load reads testdata/batchnorm/goldens.json (written by
// testdata/batchnorm/gen.py with PyTorch), failing t when it cannot.
func Load(t testing.TB) []Case {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "batchnorm", "goldens.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var goldens struct{ Cases []Case }
	if err := json.Unmarshal(raw, &goldens); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(goldens.Cases) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	return goldens.Cases
}

// MaxDiff returns the largest difference between got and want, scaled by
// max(1, |want|) (absolute for values up to 1, relative above), and where
// it is; it fails t when the lengths differ.
func MaxDiff(t testing.TB, what string, got, want []float32) (diff float64, at int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		d := math.Abs(float64(got[i])-float64(want[i])) / math.Max(1, math.Abs(float64(want[i])))
		if d > diff || math.IsNaN(d) {
			diff, at = d, i
			if math.IsNaN(d) {
				return math.Inf(1), i
			}
		}
	}
	return diff, at
}
