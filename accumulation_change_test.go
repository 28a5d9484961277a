package volt_test

import (
	"math"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// accumulationByEpoch sets the accumulation factor at each epoch's start,
// as callback.GradientAccumulationScheduler does.
type accumulationByEpoch []int

func (a accumulationByEpoch) OnTrainEpochStart(t *volt.Trainer) error {
	t.SetAccumulateGradBatches(a[t.CurrentEpoch()])
	return nil
}

// batchByEpoch is a data module whose training batch size changes per
// epoch (it is asked again every epoch).
type batchByEpoch struct {
	ds    data.Dataset
	sizes []int
	calls int
}

func (d *batchByEpoch) TrainDataloader() data.Loader {
	size := d.sizes[min(d.calls, len(d.sizes)-1)]
	d.calls++
	return &data.DataLoader{Dataset: d.ds, BatchSize: size}
}

// TestChangingAccumulationKeepsGradientsRight: accumulating 2 then 3 batches
// of 4 equals large batches of 8 then 12 (the compiled step must divide by
// the current factor, not the one it was traced with).
func TestChangingAccumulationKeepsGradientsRight(t *testing.T) {
	ds := regression(24, 5)
	cfg := volt.Config{MaxEpochs: 2, Precision: "64-true", ReloadDataloadersEveryNEpochs: 1, AccumulateGradBatches: 2,
		Callbacks: []volt.Callback{accumulationByEpoch{2, 3}}}
	accumulated := fitBoring(t, cfg, volt.Loaders{Train: &data.DataLoader{Dataset: ds, BatchSize: 4}}, &boring{})
	large := fitBoring(t, volt.Config{MaxEpochs: 2, Precision: "64-true", ReloadDataloadersEveryNEpochs: 1},
		&batchByEpoch{ds: ds, sizes: []int{8, 12}}, &boring{})
	if accumulated.GlobalStep() != 5 || large.GlobalStep() != 5 {
		t.Fatalf("global steps %d and %d, want 5 (3 + 2)", accumulated.GlobalStep(), large.GlobalStep())
	}
	a, b := floats(t, accumulated, "/dense"), floats(t, large, "/dense")
	for path, va := range a {
		for i := range va {
			if d := math.Abs(va[i] - b[path][i]); d > 1e-12 {
				t.Errorf("%s[%d]: accumulated %v vs large batches %v (diff %g)", path, i, va[i], b[path][i], d)
			}
		}
	}
}
