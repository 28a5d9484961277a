package tuner

import (
	"context"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// TestLRFinderCallback: as a callback, the sweep equals LRFind's from the same
// start, and the Fit then trains at the suggested rate.
func TestLRFinderCallback(t *testing.T) {
	d := loadLinearData(t)
	ctx := context.Background()
	opts := LRFindOptions{MinLR: 1e-4, MaxLR: 1, NumTraining: 40}
	want, err := LRFind(ctx, newTrainer(t, volt.Config{}), &linearModule{LR: 0.1, init: d}, d.loaders(), opts)
	if err != nil {
		t.Fatal(err)
	}
	m := &linearModule{LR: 0.1, init: d}
	opts.Apply = func(lr float64) { m.LR = lr }
	cb := &LRFinder{DataModule: d.loaders(), Options: opts}
	var used []float64
	spy := onTrainStart(func(tr *volt.Trainer) { used = append(used, tr.LearningRates()[0]) })
	tr := newTrainer(t, volt.Config{MaxSteps: 2, Callbacks: []volt.Callback{cb, spy}})
	if err := tr.Fit(ctx, m, d.loaders()); err != nil {
		t.Fatal(err)
	}
	if cb.Result == nil || cb.Result.SuggestedIndex != want.SuggestedIndex || cb.Result.SuggestedLR != want.SuggestedLR {
		t.Fatalf("callback result %+v, LRFind %d (%v)", cb.Result, want.SuggestedIndex, want.SuggestedLR)
	}
	if m.LR != want.SuggestedLR {
		t.Errorf("module LR %v, want the suggestion %v", m.LR, want.SuggestedLR)
	}
	if len(used) != 2 || used[0] != float64(float32(want.SuggestedLR)) {
		t.Errorf("the Fit trained at %v, want the suggestion %v", used, want.SuggestedLR)
	}
}

// onTrainStart is a callback calling f at each training batch's start.
type onTrainStart func(*volt.Trainer)

func (f onTrainStart) OnTrainBatchStart(t *volt.Trainer, _ *data.Batch, _ int) error {
	f(t)
	return nil
}
