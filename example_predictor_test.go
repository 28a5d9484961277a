package volt_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/voltml/volt"
)

// LoadPredictor turns a checkpoint into a predictor: the module's
// PredictStep on inputs held in memory (Go slices or tensors, the batch on
// the first axis), with no Trainer or data module. One predictor serves
// many goroutines; it compiles a program per batch shape and keeps a
// bounded number of them.
func ExampleLoadPredictor() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "volt-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.ckpt")

	trained := &exRegressor{Hidden: 16, LR: 0.02}
	t, _ := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 3}))
	if err := t.Fit(ctx, trained, exData()); err != nil {
		fmt.Println(err)
		return
	}
	if err := t.SaveCheckpoint(path, true); err != nil {
		fmt.Println(err)
		return
	}
	want, _ := t.Predict(ctx, trained, exData())

	// In the service:
	p, err := volt.LoadPredictor(path, &exRegressor{}, volt.PredictorMaxShapes(4))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	batch := exExamples(16, 3)[:8] // the first prediction batch, as Go slices
	x := make([][]float32, len(batch))
	for i, e := range batch {
		x[i] = e.Inputs[0].Value.([]float32)
	}
	var wg sync.WaitGroup
	same := make([]bool, 4)
	for g := range same {
		wg.Go(func() {
			y, err := p.Predict(x)
			if err != nil {
				fmt.Println(err)
				return
			}
			same[g] = fmt.Sprint(y.Value()) == fmt.Sprint(want[0][0].Value())
		})
	}
	wg.Wait()
	y, _ := p.Predict(x[:2])
	fmt.Println("shape:", y.Shape().Dimensions, "same as Trainer.Predict:", same)
	_, err = p.Predict(x, x)
	fmt.Println(err)
	// Output:
	// shape: [2 1] same as Trainer.Predict: [true true true true]
	// volt.Predictor.Predict: got 2 inputs, the module takes 1 (input 0: Float32, as the first call's)
}
