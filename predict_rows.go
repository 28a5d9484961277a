package volt

import (
	"context"
	"fmt"
)

// PredictRows is Predict followed by PredictionRows for the common case of
// one prediction loader (Lightning's torch.cat(trainer.predict(model, dm))):
// it returns one row per example of that loader, in its order, as float32
// whatever the module's dtype.
//
// A data module with several prediction loaders is an error naming how
// many, after they have run: call Predict and PredictionRows(preds[i]) on
// each. Predict's errors and options apply unchanged.
func (t *Trainer) PredictRows(ctx context.Context, m Module, dm DataModule, opts ...RunOption) ([][]float32, error) {
	preds, err := t.Predict(ctx, m, dm, opts...)
	if err != nil {
		return nil, err
	}
	if len(preds) != 1 {
		return nil, fmt.Errorf("volt: PredictRows reads one prediction loader; %T provides %d: call Predict and volt.PredictionRows(preds[i]) for each", dm, len(preds))
	}
	rows, err := PredictionRows(preds[0])
	if err != nil {
		return nil, fmt.Errorf("volt: PredictRows: %w", err)
	}
	return rows, nil
}
