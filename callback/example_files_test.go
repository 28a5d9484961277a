package callback_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
)

// exCrash fails Fit at the end of epoch CrashAt, as a crash would.
type exCrash struct{ CrashAt int }

// OnTrainEpochEnd implements volt.OnTrainEpochEnd.
func (c exCrash) OnTrainEpochEnd(t *volt.Trainer) error {
	if t.CurrentEpoch() == c.CrashAt {
		return errors.New("out of disk")
	}
	return nil
}

// OnExceptionCheckpoint saves a resumable checkpoint when Fit fails or is
// interrupted; Fit with FromCheckpoint(Path()) continues from there, in
// this process or a new one.
func ExampleOnExceptionCheckpoint() {
	dir, err := os.MkdirTemp("", "volt-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	onError := callback.NewOnExceptionCheckpoint(callback.OnExceptionCheckpointConfig{Dirpath: dir})
	ctx := context.Background()
	crashing, err := volt.NewTrainer(exQuiet(volt.Config{
		MaxEpochs:            5,
		DisableCheckpointing: true,
		Callbacks:            []volt.Callback{onError, exCrash{CrashAt: 1}},
	}))
	if err != nil {
		panic(err)
	}
	err = crashing.Fit(ctx, exLine{LR: 0.05}, exData())
	fmt.Printf("Fit: %v\nsaved %s at step %d\n", err, filepath.Base(onError.Path()), crashing.GlobalStep())

	resumed, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 5, DisableCheckpointing: true}))
	if err != nil {
		panic(err)
	}
	if err := resumed.Fit(ctx, exLine{LR: 0.05}, exData(), volt.FromCheckpoint(onError.Path())); err != nil {
		panic(err)
	}
	fmt.Printf("resumed run ends at epoch %d, step %d\n", resumed.CurrentEpoch(), resumed.GlobalStep())
	// Output:
	// Fit: callback_test.exCrash.OnTrainEpochEnd (epoch 1, global step 8): out of disk
	// saved on_exception.ckpt at step 8
	// resumed run ends at epoch 5, step 20
}

// exLinePredictor is exLine with a PredictStep.
type exLinePredictor struct{ exLine }

// PredictStep implements volt.PredictStepper: the regression's output.
func (exLinePredictor) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return layers.DenseWithBias(s.Scope().In("dense"), b.Input(0), 1)
}

// PredictionWriter writes what Predict returns to JSON files, per batch
// ("batch"), in one file at the end ("epoch") or both.
func ExamplePredictionWriter() {
	dir, err := os.MkdirTemp("", "volt-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	writer := callback.NewPredictionWriter(callback.PredictionWriterConfig{Dir: dir, WriteInterval: "epoch"})
	trainer, err := volt.NewTrainer(exQuiet(volt.Config{
		MaxEpochs:            10,
		DisableCheckpointing: true,
		Callbacks:            []volt.Callback{writer},
	}))
	if err != nil {
		panic(err)
	}
	ctx, model := context.Background(), exLinePredictor{exLine{LR: 0.05}}
	if err := trainer.Fit(ctx, model, exData()); err != nil {
		panic(err)
	}
	examples := exExamples(6, 3)
	loaders := volt.Loaders{Predict: []data.Loader{&data.DataLoader{Dataset: examples, BatchSize: 4}}}
	if _, err := trainer.Predict(ctx, model, loaders); err != nil {
		panic(err)
	}
	b, err := os.ReadFile(writer.EpochFile())
	if err != nil {
		panic(err)
	}
	var file callback.EpochPredictions
	if err := json.Unmarshal(b, &file); err != nil {
		panic(err)
	}
	fmt.Println(filepath.Base(writer.EpochFile()))
	for _, p := range file.Dataloaders[0] {
		fmt.Printf("batch %d: %s %v\n", p.BatchIdx, p.DType, p.Shape)
		for i, v := range p.Values {
			label := examples[4*p.BatchIdx+i].Labels[0].Value.([]float32)[0]
			fmt.Printf("  predicted %6.2f, label %6.2f\n", v, label)
		}
	}
	// Output:
	// predictions.json
	// batch 0: Float32 [4 1]
	//   predicted   0.86, label   0.64
	//   predicted   2.28, label   2.28
	//   predicted   1.14, label   1.09
	//   predicted  -2.21, label  -2.27
	// batch 1: Float32 [2 1]
	//   predicted   3.62, label   3.83
	//   predicted  -2.29, label  -2.40
}
