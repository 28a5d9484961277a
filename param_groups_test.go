package volt_test

import (
	"slices"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// grouped is twoHeads with one optimizer whose /b part is a group.
type grouped struct{ twoHeads }

func (m *grouped) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimizers{{Optimizer: optim.SGD(0.01), Groups: []volt.ParamGroup{{Params: []string{"/b"}, LRScale: 0}}}}
}

// actions runs a function at given batch indices (at batch start).
type actions map[int]func(t *volt.Trainer) error

func (a actions) OnTrainBatchStart(t *volt.Trainer, _ *data.Batch, i int) error {
	if f, ok := a[int(t.Progress().TrainBatch.Total.Ready)-1]; ok {
		return f(t)
	}
	return nil
}

func TestParamGroupsAndFreezing(t *testing.T) {
	ch := &changes{t: t}
	act := actions{
		2: func(t *volt.Trainer) error { return t.SetLRScale(0, 0, 1) },
		4: func(t *volt.Trainer) error {
			for v := range t.Store().IterVariables() {
				if v.Path() == "/a/dense/weights" || v.Path() == "/a/dense/biases" {
					v.SetTrainable(false)
				}
			}
			t.RetraceTrainingStep()
			return nil
		},
	}
	fitBoring(t, volt.Config{MaxEpochs: 2, Callbacks: []volt.Callback{act, ch}}, loaderOf(regression(16, 1), 4), &grouped{})
	// Batches 1-2: /b has scale 0; 2-3: both; from 4 on /a is frozen.
	want := []string{"1:a", "2:ab", "3:ab", "0:b", "1:b", "2:b", "3:b"}
	if !slices.Equal(ch.log[1:], want) {
		t.Errorf("updated per batch %v, want %v", ch.log[1:], want)
	}
}
