package tuner

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
)

// TestLRFindBadInput checks that each bad option or argument is an error
// naming it.
func TestLRFindBadInput(t *testing.T) {
	d := loadLinearData(t)
	m := &linearModule{LR: 0.1, init: d}
	for _, tc := range []struct {
		name   string
		tr     *volt.Trainer
		module volt.Module
		dm     volt.DataModule
		opts   LRFindOptions
		want   string
	}{
		{"negative min", nil, m, d.loaders(), LRFindOptions{MinLR: -1}, "LRFindOptions.MinLR: must be a positive finite number, got -1"},
		{"nan max", nil, m, d.loaders(), LRFindOptions{MaxLR: math.NaN()}, "LRFindOptions.MaxLR: must be a positive finite number"},
		{"max below min", nil, m, d.loaders(), LRFindOptions{MinLR: 0.1, MaxLR: 0.01}, "LRFindOptions.MaxLR: must be larger than MinLR (0.1), got 0.01"},
		{"one step", nil, m, d.loaders(), LRFindOptions{NumTraining: 1}, "LRFindOptions.NumTraining: must be at least 2 steps, got 1"},
		{"mode", nil, m, d.loaders(), LRFindOptions{Mode: "cosine"}, `LRFindOptions.Mode: must be "exponential" or "linear", got "cosine"`},
		{"threshold", nil, m, d.loaders(), LRFindOptions{EarlyStopThreshold: -2}, "LRFindOptions.EarlyStopThreshold: must be a positive finite number, got -2"},
		{"skip", nil, m, d.loaders(), LRFindOptions{SkipBegin: -1, SkipEnd: -3}, "LRFindOptions.SkipEnd: must be 0 (default 1) or positive, got -3"},
		{"no module", nil, nil, d.loaders(), LRFindOptions{}, "tuner.LRFind: module is nil"},
		{"no train loader", nil, m, struct{}{}, LRFindOptions{}, "data module struct {} has no TrainDataloader() data.Loader"},
		{"two optimizers", nil, twoOptimizers{m}, d.loaders(), LRFindOptions{NumTraining: 3}, "returned 2 optimizers; the learning-rate finder works with one"},
		{"no trainer", (*volt.Trainer)(nil), m, d.loaders(), LRFindOptions{}, "tuner.LRFind: trainer is nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := tc.tr
			if tr == nil && tc.name != "no trainer" {
				tr = newTrainer(t, volt.Config{})
			}
			_, err := LRFind(context.Background(), tr, tc.module, tc.dm, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// twoOptimizers is a module with two optimizers.
type twoOptimizers struct{ *linearModule }

func (m twoOptimizers) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimizers{{Optimizer: optim.SGD(0.1), Params: []string{"/layer"}}, {Optimizer: optim.SGD(0.1), Params: []string{"/other"}}}
}

// TestWriteCSV checks the curve's CSV.
func TestWriteCSV(t *testing.T) {
	r := &LRFindResult{LRs: []float64{1e-3, 0.01, 0.1}, Losses: []float64{2, 1.5, math.NaN()}, SuggestedIndex: 1}
	var b bytes.Buffer
	if err := r.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	want := "step,lr,loss,suggested\n0,0.001,2,0\n1,0.01,1.5,1\n2,0.1,NaN,0\n"
	if b.String() != want {
		t.Fatalf("CSV\n%s\nwant\n%s", b.String(), want)
	}
}

// TestPowIsCorrectlyRounded compares pow with values C's pow gives
// (Python's ** on glibc), where Go's math.Pow is an ulp off.
func TestPowIsCorrectlyRounded(t *testing.T) {
	for _, tc := range []struct{ x, y, want float64 }{
		{1e4, 2.0 / 40, 1.5848931924611136},
		{1e4, 40.0 / 40, 10000},
		{50000, 2.0 / 25, 2.3763893662359084},
		{0.98, 3, 0.9411919999999999},
		{1e4, 28.0 / 40, 630.957344480193},
		{1e4, 29.0 / 40, 794.3282347242813},
		{1e4, 30.0 / 40, 1000.0},
		{1e4, 31.0 / 40, 1258.9254117941675},
		{1e4, 37.0 / 40, 5011.872336272725},
		{2, 0.5, math.Sqrt2},
	} {
		if got := pow(tc.x, tc.y); got != tc.want {
			t.Errorf("pow(%v, %v) = %v, want %v (math.Pow %v)", tc.x, tc.y, got, tc.want, math.Pow(tc.x, tc.y))
		}
	}
}
