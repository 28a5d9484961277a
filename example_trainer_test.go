package volt_test

import (
	"context"
	"fmt"

	"github.com/voltml/volt"
)

// A Trainer runs the four loops of Lightning around a Module: Fit trains
// (validating after each epoch), Validate and Test return one map of metrics
// per loader, Predict returns the PredictStep outputs batch by batch.
func ExampleTrainer() {
	ctx := context.Background()
	trainer, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 20}))
	if err != nil {
		panic(err)
	}
	model, dm := exLine{}, exData()
	if err := trainer.Fit(ctx, model, dm); err != nil {
		panic(err)
	}
	fmt.Println("epochs:", trainer.CurrentEpoch(), "steps:", trainer.GlobalStep())

	val, err := trainer.Validate(ctx, model, dm)
	if err != nil {
		panic(err)
	}
	test, err := trainer.Test(ctx, model, dm)
	if err != nil {
		panic(err)
	}
	fmt.Printf("val_loss < 0.05: %v, test_loss < 0.05: %v\n", val[0]["val_loss"] < 0.05, test[0]["test_loss"] < 0.05)

	preds, err := trainer.Predict(ctx, model, dm)
	if err != nil {
		panic(err)
	}
	fmt.Println("predict: loaders", len(preds), "batches", len(preds[0]), "shape", preds[0][0].Shape().Dimensions)
	// Output:
	// epochs: 20 steps: 80
	// val_loss < 0.05: true, test_loss < 0.05: true
	// predict: loaders 1 batches 2 shape [8 1]
}
