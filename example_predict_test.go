package volt_test

import (
	"context"
	"fmt"

	"github.com/voltml/volt"
)

// Predict returns, for each predict loader, one tensor per batch in the
// module's compute dtype (bfloat16 under "bf16-mixed"); PredictionRows joins
// a loader's batches and reads them as float32, one row per example.
func ExamplePredictionRows() {
	ctx := context.Background()
	m := &exRegressor{Hidden: 16, LR: 0.02}
	t, _ := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 3, Precision: "bf16-mixed"}))
	if err := t.Fit(ctx, m, exData()); err != nil {
		fmt.Println(err)
		return
	}
	preds, err := t.Predict(ctx, m, exData())
	if err != nil {
		fmt.Println(err)
		return
	}
	rows, err := volt.PredictionRows(preds[0]) // the first (here the only) predict loader
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d batches of %s; %d rows of %d value\n", len(preds[0]), preds[0][0].DType(), len(rows), len(rows[0]))
	// Output:
	// 2 batches of BFloat16; 16 rows of 1 value
}
