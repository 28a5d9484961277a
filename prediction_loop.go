package volt

import (
	"context"
	"fmt"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/data"
)

// Predict runs the module's PredictStep over the data module's prediction
// loaders and returns, for each loader, the prediction of each batch:
// result[i][k] is the tensor PredictStep returned for batch k of loader i,
// in the module's compute dtype (bfloat16 under "bf16-mixed", float16 under
// "16-mixed"). PredictionRows joins a loader's batches and reads them as
// float32, one row per example, whatever the dtype; PredictionValues gives
// the flat values and their shape.
//
// In a data-parallel job each rank predicts its shard of each map-style
// DataLoader and every rank returns the whole result, in the order and
// batches one process would give; each prediction then needs the batch as
// its first axis.
func (t *Trainer) Predict(ctx context.Context, m Module, dm DataModule, opts ...RunOption) ([][]*tensors.Tensor, error) {
	var out [][]*tensors.Tensor
	err := t.lifecycle(ctx, StagePredict, m, dm, opts, func(ctx context.Context) error {
		ps, ok := m.(PredictStepper)
		if !ok {
			return fmt.Errorf("volt: Predict needs a module with PredictStep; %T has none", m)
		}
		var loaders []data.Loader
		if p, ok := dm.(PredictDataloaders); ok {
			loaders = p.PredictDataloaders()
		}
		if len(loaders) == 0 {
			return fmt.Errorf("volt: Predict needs loaders: %T provides no predict loaders", dm)
		}
		if err := checkLoaders("predict", loaders); err != nil {
			return err
		}
		var err error
		out, err = t.runPrediction(ctx, ps, loaders)
		return err
	})
	return out, err
}

// runPrediction is the prediction loop: hooks around each loader's batches,
// predictions collected per loader.
func (t *Trainer) runPrediction(ctx context.Context, ps PredictStepper, loaders []data.Loader) ([][]*tensors.Tensor, error) {
	t.state.Stage = RunningPredict
	loaders, sharded := t.shardPredictLoaders(loaders)
	t.run.evalLoaders = loaders
	p := &t.progress.PredictBatch
	p.resetCurrent()
	if err := t.emit(hookOnPredictStart, hookArgs{}); err != nil {
		return nil, err
	}
	if err := t.emit(hookOnPredictEpochStart, hookArgs{}); err != nil {
		return nil, err
	}
	out := make([][]*tensors.Tensor, len(loaders))
	for dl, loader := range loaders {
		limit, err := limitOf("LimitPredictBatches", t.cfg.LimitPredictBatches, loader.NumBatches())
		if err != nil {
			return nil, err
		}
		l := batchLoop{what: "predict", stepName: "PredictStep", progress: p,
			batchStart: hookOnPredictBatchStart, batchEnd: hookOnPredictBatchEnd}
		err = t.evalBatches(ctx, l, loader, dl, limit, func(b *data.Batch) (*StepOutput, error) {
			so, err := t.evalSteps().predict(ps, dl, b)
			if err == nil {
				out[dl] = append(out[dl], so.Prediction)
			}
			return so, err
		})
		if err != nil {
			return nil, err
		}
		if sharded[dl] != nil {
			if out[dl], err = t.gatherPredictions(dl, sharded[dl], out[dl]); err != nil {
				return nil, err
			}
		}
	}
	if err := t.emit(hookOnPredictEpochEnd, hookArgs{}); err != nil {
		return nil, err
	}
	if err := t.emit(hookOnPredictEnd, hookArgs{}); err != nil {
		return nil, err
	}
	return out, nil
}
