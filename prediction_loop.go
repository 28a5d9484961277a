package volt

import (
	"context"
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
)

// Predict runs the module's PredictStep over the data module's prediction
// loaders and returns, for each loader, the prediction of each batch. In a
// data-parallel job each rank predicts its shard of each map-style
// DataLoader and every rank returns the whole result in one process's
// order and batches (see gatherPredictions); each prediction then needs
// the batch as its first axis.
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

// predict runs the compiled predict step of loader dl on b and returns
// what the batch-end hooks see, with the prediction.
func (c compiledEvalSteps) predict(ps PredictStepper, dl int, b *data.Batch) (*StepOutput, error) {
	prog, err := c.t.predictProgram(ps, dl)
	if err != nil {
		return nil, err
	}
	outs, gid, err := prog.prog.Run(b)
	if err != nil {
		return nil, err
	}
	so := &StepOutput{stage: RunningPredict}
	if names := prog.outputNames[gid]; len(names) > 0 {
		so = c.t.fetchOutputs(RunningPredict, names, outs[1:1+len(names)])
	}
	so.Prediction = outs[0]
	return so, nil
}

// predictProgram returns the compiled predict step for loader dl.
func (t *Trainer) predictProgram(ps PredictStepper, dl int) (*evalProgram, error) {
	key := evalKey{RunningPredict, dl, 0, t.wantsOutputs(hookOnPredictBatchEnd, RunningPredict)}
	if ep, ok := t.evals[key]; ok {
		return ep, nil
	}
	ep := &evalProgram{outputNames: map[graph.GraphId][]string{}}
	var err error
	ep.prog, err = t.eng.Compile("PredictStep", engine.Evaluation, func(scope *model.Scope, inputs, labels []*graph.Node) []*graph.Node {
		s := &Step{scope: scope, graph: graphOf(inputs, labels), stage: RunningPredict, dataloaderIdx: dl}
		pred := ps.PredictStep(s, Batch{Inputs: inputs, Labels: labels})
		if pred == nil {
			panic("PredictStep returned nil")
		}
		t.checkLoaded(s.graph, engine.TrainableVariables(t.eng.Store, s.graph))
		outs := []*graph.Node{pred}
		if key.outputs {
			var names []string
			outs = append(outs, outputNodes(s.outputs, &names)...)
			ep.outputNames[s.graph.GraphId()] = names
		}
		return outs
	})
	if err != nil {
		return nil, err
	}
	t.evals[key] = ep
	return ep, nil
}
