package volt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// exBatchLosses prints the loss of each training batch of the first epoch.
type exBatchLosses struct{}

// OnTrainBatchEnd implements volt.OnTrainBatchEnd. The loss is read from
// the device only because Loss asks for it.
func (exBatchLosses) OnTrainBatchEnd(t *volt.Trainer, out *volt.StepOutput, b *data.Batch, batchIdx int) error {
	if t.CurrentEpoch() == 0 {
		fmt.Printf("batch %d (%d examples): loss %.2f, global step %d\n", batchIdx, b.Size, out.Loss(), t.GlobalStep())
	}
	return nil
}

// Batch hooks run on the host after each compiled step, with what the step
// produced (volt.StepOutput) and the batch; OnTrainBatchStart runs before
// it and may end the epoch early with Trainer.SkipRestOfEpoch.
func ExampleOnTrainBatchEnd() {
	trainer, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 2, Callbacks: []volt.Callback{exBatchLosses{}}}))
	if err != nil {
		panic(err)
	}
	if err := trainer.Fit(context.Background(), exLine{}, exData()); err != nil {
		panic(err)
	}
	// Output:
	// batch 0 (16 examples): loss 24.71, global step 1
	// batch 1 (16 examples): loss 18.74, global step 2
	// batch 2 (16 examples): loss 8.12, global step 3
	// batch 3 (16 examples): loss 8.10, global step 4
}

// exSavedCounter counts the training batches it has seen, across resumes:
// its count is saved in checkpoints.
type exSavedCounter struct{ Batches int }

// OnTrainBatchEnd implements volt.OnTrainBatchEnd.
func (c *exSavedCounter) OnTrainBatchEnd(*volt.Trainer, *volt.StepOutput, *data.Batch, int) error {
	c.Batches++
	return nil
}

// StateKey implements volt.Stateful: the name of the state in checkpoints.
func (c *exSavedCounter) StateKey() string { return "exSavedCounter" }

// State implements volt.Stateful.
func (c *exSavedCounter) State() ([]byte, error) { return json.Marshal(c) }

// LoadState implements volt.Stateful.
func (c *exSavedCounter) LoadState(b []byte) error { return json.Unmarshal(b, c) }

// A callback implementing volt.Stateful has its state saved in every full
// checkpoint and loaded back, into the callback with the same StateKey,
// when a run resumes from one (Lightning's state_dict/load_state_dict).
func ExampleStateful() {
	dir, err := os.MkdirTemp("", "volt-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx, path := context.Background(), filepath.Join(dir, "two-epochs.ckpt")

	first := &exSavedCounter{}
	trainer, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 2, Callbacks: []volt.Callback{first}}))
	if err != nil {
		panic(err)
	}
	if err := trainer.Fit(ctx, exLine{}, exData()); err != nil {
		panic(err)
	}
	if err := trainer.SaveCheckpoint(path, false); err != nil {
		panic(err)
	}

	second := &exSavedCounter{} // a new process would start from zero too
	resumed, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 3, Callbacks: []volt.Callback{second}}))
	if err != nil {
		panic(err)
	}
	if err := resumed.Fit(ctx, exLine{}, exData(), volt.FromCheckpoint(path)); err != nil {
		panic(err)
	}
	fmt.Println("batches seen: first run", first.Batches, "resumed run", second.Batches)
	// Output:
	// batches seen: first run 8 resumed run 12
}

// exRegressionData is a data module (Lightning's LightningDataModule):
// it prepares and sets up its data and hands the trainer its loaders.
type exRegressionData struct {
	BatchSize  int
	train, val data.Slice
}

// PrepareData implements volt.DataPreparer: download or unpack, once.
func (d *exRegressionData) PrepareData() error {
	fmt.Println("PrepareData")
	return nil
}

// Setup implements volt.DataSetup: split or load for the stage.
func (d *exRegressionData) Setup(stage volt.Stage) error {
	fmt.Println("Setup", stage)
	d.train, d.val = exExamples(64, 1), exExamples(16, 2)
	return nil
}

// TrainDataloader implements volt.TrainDataloader.
func (d *exRegressionData) TrainDataloader() data.Loader {
	fmt.Println("TrainDataloader")
	return &data.DataLoader{Dataset: d.train, BatchSize: d.BatchSize, Shuffle: true}
}

// ValDataloaders implements volt.ValDataloaders.
func (d *exRegressionData) ValDataloaders() []data.Loader {
	fmt.Println("ValDataloaders")
	return []data.Loader{&data.DataLoader{Dataset: d.val, BatchSize: d.BatchSize}}
}

// Teardown implements volt.DataTeardown.
func (d *exRegressionData) Teardown(stage volt.Stage) error {
	fmt.Println("Teardown", stage)
	return nil
}

// A data module is any value with some of the loader methods
// (TrainDataloader, ValDataloaders, TestDataloaders, PredictDataloaders)
// and, optionally, PrepareData, Setup and Teardown, which the trainer calls
// in this order; volt.Loaders is the ready-made one.
func ExampleDataModule() {
	trainer, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 2}))
	if err != nil {
		panic(err)
	}
	if err := trainer.Fit(context.Background(), exLine{}, &exRegressionData{BatchSize: 16}); err != nil {
		panic(err)
	}
	fmt.Printf("global step %d, val_loss %.2f\n", trainer.GlobalStep(), trainer.CallbackMetrics()["val_loss"])
	// Output:
	// PrepareData
	// Setup fit
	// TrainDataloader
	// ValDataloaders
	// Teardown fit
	// global step 8, val_loss 3.97
}

// exFailAt fails the training batch hook at a global step.
type exFailAt struct{ Step int64 }

// OnTrainBatchStart implements volt.OnTrainBatchStart.
func (f exFailAt) OnTrainBatchStart(t *volt.Trainer, _ *data.Batch, _ int) error {
	if t.GlobalStep() == f.Step {
		return errors.New("disk full")
	}
	return nil
}

// exReportFailure prints the error a run failed with.
type exReportFailure struct{}

// OnException implements volt.OnException.
func (exReportFailure) OnException(t *volt.Trainer, err error) {
	fmt.Println("OnException:", err)
}

// OnException is called when a run fails or its context is cancelled, with
// the error Fit will return: a hook's error comes wrapped in a
// *volt.HookError saying where it happened.
func ExampleOnException() {
	trainer, err := volt.NewTrainer(exQuiet(volt.Config{
		MaxEpochs: 3,
		Callbacks: []volt.Callback{exFailAt{Step: 5}, exReportFailure{}},
	}))
	if err != nil {
		panic(err)
	}
	err = trainer.Fit(context.Background(), exLine{}, exData())
	var hookErr *volt.HookError
	if errors.As(err, &hookErr) {
		fmt.Printf("hook %s of %s failed at epoch %d, step %d: %v\n", hookErr.Hook, hookErr.Target, hookErr.Epoch, hookErr.GlobalStep, hookErr.Err)
	}
	// Output:
	// OnException: volt_test.exFailAt.OnTrainBatchStart (epoch 1, global step 5): disk full
	// hook OnTrainBatchStart of volt_test.exFailAt failed at epoch 1, step 5: disk full
}
