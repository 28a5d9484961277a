package volt_test

import (
	"context"
	"iter"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// TestBatchOfAnotherDTypeRefused: a float64 batch among float32 ones (in
// training, validation or test) stops the run with an error naming the
// loader, the batch, the input or label and both dtypes, where volt used
// to retrace the step and go on silently.
func TestBatchOfAnotherDTypeRefused(t *testing.T) {
	float32s := mixedLoader{n: 4}
	odd := mixedLoader{n: 4, float64At: 2, float64Label: false}
	oddLabel := mixedLoader{n: 4, float64At: 3, float64Label: true}
	for _, tc := range []struct {
		name string
		run  func(tr *volt.Trainer) error
		want []string
	}{
		{"training input", func(tr *volt.Trainer) error {
			return tr.Fit(t.Context(), &boring{}, volt.Loaders{Train: odd})
		}, []string{"training loader, epoch 0, batch 2", "input 0 is Float64", "it was Float32 in batch 0"}},
		{"training label", func(tr *volt.Trainer) error {
			return tr.Fit(t.Context(), &boring{}, volt.Loaders{Train: oddLabel})
		}, []string{"training loader, epoch 0, batch 3", "label 0 is Float64", "it was Float32 in batch 0"}},
		{"validation input", func(tr *volt.Trainer) error {
			return tr.Fit(t.Context(), &boring{}, volt.Loaders{Train: float32s, Val: []data.Loader{float32s, odd}})
		}, []string{"validate loader 1, batch 2", "input 0 is Float64", "it was Float32 in batch 0"}},
		{"test input", func(tr *volt.Trainer) error {
			_, err := tr.Test(t.Context(), &boring{}, volt.Loaders{Test: []data.Loader{odd}})
			return err
		}, []string{"test loader 0, batch 2", "input 0 is Float64", "it was Float32 in batch 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1, NumSanityValSteps: volt.Ptr(0)}))
			err := tc.run(tr)
			if err == nil {
				t.Fatal("the run accepted a float64 batch among float32 ones")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// mixedLoader yields n batches of 4 boring examples (8 float32 features,
// a float32 label); batch float64At (when > 0) has a float64 input, or a
// float64 label with float64Label.
type mixedLoader struct {
	n, float64At int
	float64Label bool
}

func (l mixedLoader) NumBatches() int { return l.n }

func (l mixedLoader) Batches(ctx context.Context, _, skip int) iter.Seq2[*data.Batch, error] {
	return func(yield func(*data.Batch, error) bool) {
		for i := skip; i < l.n; i++ {
			x, y := make([][]float32, 4), make([][]float32, 4)
			for r := range x {
				x[r] = make([]float32, 8)
				for c := range x[r] {
					x[r][c] = float32(i+r+c) / 10
				}
				y[r] = []float32{float32(r)}
			}
			in, label := tensors.FromValue(x), tensors.FromValue(y)
			if i == l.float64At && l.float64At > 0 {
				if l.float64Label {
					label = tensors.FromValue([][]float64{{0}, {1}, {2}, {3}})
				} else {
					x64 := make([][]float64, 4)
					for r := range x64 {
						x64[r] = make([]float64, 8)
					}
					in = tensors.FromValue(x64)
				}
			}
			if !yield(&data.Batch{Inputs: []*tensors.Tensor{in}, Labels: []*tensors.Tensor{label}, Size: 4}, nil) {
				return
			}
		}
	}
}
