package volt_test

import (
	"context"
	"fmt"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// exEpochReporter is a callback: any value with hook methods. It implements
// volt.OnTrainEpochEnd, called after each training epoch (after its
// validation), when the epoch's metrics are in CallbackMetrics.
type exEpochReporter struct{}

func (exEpochReporter) OnTrainEpochEnd(t *volt.Trainer) error {
	m := t.CallbackMetrics()
	fmt.Printf("epoch %d step %d: train_loss=%.2f val_loss=%.2f\n", t.CurrentEpoch(), t.GlobalStep(), m["train_loss"], m["val_loss"])
	return nil
}

// A callback is any value implementing some of the hook interfaces
// (volt.OnTrainEpochEnd here); Config.Callbacks lists them. Hooks run on the
// host between compiled steps, so they may read the trainer's state, log
// values with Trainer.Log and ask it to stop with Trainer.Stop.
func ExampleOnTrainEpochEnd() {
	trainer, err := volt.NewTrainer(exQuiet(volt.Config{
		MaxEpochs: 3,
		Callbacks: []volt.Callback{exEpochReporter{}},
	}))
	if err != nil {
		panic(err)
	}
	if err := trainer.Fit(context.Background(), exLine{}, exData()); err != nil {
		panic(err)
	}
	// Output:
	// epoch 0 step 4: train_loss=8.10 val_loss=9.34
	// epoch 1 step 8: train_loss=2.20 val_loss=3.97
	// epoch 2 step 12: train_loss=1.49 val_loss=1.76
}

// exStopper asks the trainer to stop from a hook, as Lightning's
// trainer.should_stop = True.
type exStopper struct{ after int64 }

func (s exStopper) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	if t.GlobalStep() >= s.after {
		t.Stop("enough steps")
	}
	return nil
}

// A hook can end training early: Trainer.Stop finishes the current step and
// ends Fit as Lightning's trainer.should_stop = True does.
func ExampleTrainer_Stop() {
	trainer, err := volt.NewTrainer(exQuiet(volt.Config{
		MaxEpochs: 10,
		Callbacks: []volt.Callback{exStopper{after: 6}},
	}))
	if err != nil {
		panic(err)
	}
	if err := trainer.Fit(context.Background(), exLine{}, exData()); err != nil {
		panic(err)
	}
	// As in Lightning, the stopped epoch (1) counts as done.
	fmt.Println("stopped at step", trainer.GlobalStep(), "current epoch", trainer.CurrentEpoch())
	// Output:
	// stopped at step 6 current epoch 2
}
