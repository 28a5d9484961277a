package callback_test

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
)

// ThroughputMonitor logs each training epoch's batches, samples and (with
// ItemsFn) items per second. The clock here moves one second per reading,
// so the rates do not depend on the machine.
func ExampleThroughputMonitor() {
	clock := &exClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	throughput := callback.NewThroughputMonitor(callback.ThroughputMonitorConfig{
		ItemsFn: func(b *data.Batch) int { return b.Size * 8 }, // 8 features per example
		Now:     clock.Now,
	})
	trainer := exFit(volt.Config{
		MaxEpochs:            1,
		DisableCheckpointing: true,
		Callbacks:            []volt.Callback{throughput},
	}, exLine{LR: 0.05}, exData())
	metrics := trainer.CallbackMetrics()
	for _, name := range slices.Sorted(maps.Keys(metrics)) {
		if strings.HasPrefix(name, "throughput/") {
			fmt.Printf("%s=%.1f\n", name, metrics[name])
		}
	}
	// Output:
	// throughput/batches_per_sec=1.0
	// throughput/items_per_sec=128.0
	// throughput/samples_per_sec=16.0
}

// Off a terminal ProgressBar writes plain lines: one per epoch end and,
// with Every, one every Every optimization steps, each with the values
// logged with volt.ProgBar (here the last validation loss). On a terminal it
// draws tqdm-style bars, which also show the running mean of the loss.
func ExampleProgressBar() {
	bar := callback.NewProgressBar(callback.ProgressBarConfig{
		Writer:        os.Stdout,
		Every:         2,
		ForceTerminal: volt.Ptr(false),
	})
	exFit(volt.Config{
		MaxEpochs:            2,
		DisableCheckpointing: true,
		Callbacks:            []volt.Callback{bar},
	}, exProgBarLine{exLine{LR: 0.05}}, exData())
	// Output:
	// epoch 0 batch 2/4 step 2
	// epoch 0 batch 4/4 step 4
	// epoch 0 step 4 val_loss=9.343
	// epoch 1 batch 2/4 step 6 val_loss=9.343
	// epoch 1 batch 4/4 step 8 val_loss=9.343
	// epoch 1 step 8 val_loss=3.967
}

// exProgBarLine is exLine that shows its validation loss in the progress
// bar.
type exProgBarLine struct{ exLine }

// ValidationStep implements volt.ValidationStepper.
func (m exProgBarLine) ValidationStep(s *volt.Step, b volt.Batch) {
	s.Log("val_loss", m.mse(s, b), volt.ProgBar)
}

// ModelSummary prints the model's layers when training starts, GoMLX's
// own "dense" scope inside "backbone" and "head" folded into them;
// MaxDepth -1 lists every scope and variable.
func ExampleModelSummary() {
	summary := callback.NewModelSummary(callback.ModelSummaryConfig{MaxDepth: -1, Writer: os.Stdout})
	exFit(volt.Config{
		MaxEpochs:            1,
		DisableCheckpointing: true,
		Callbacks:            []volt.Callback{summary},
	}, exBackboneHead{}, exData())
	// Output:
	// | Name             | Type     | Params | Mode      | DType   | Shape
	// ----------------------------------------------------------------------
	// 0 | backbone         | Dense    | 36     | trainable | Float32 | -
	// 1 | backbone/weights | Variable | 32     | trainable | Float32 | [8 4]
	// 2 | backbone/biases  | Variable | 4      | trainable | Float32 | [4]
	// 3 | head             | Dense    | 5      | trainable | Float32 | -
	// 4 | head/weights     | Variable | 4      | trainable | Float32 | [4 1]
	// 5 | head/biases      | Variable | 1      | trainable | Float32 | [1]
	// ----------------------------------------------------------------------
	// 41         Trainable params
	// 0          Non-trainable params
	// 41         Total params
	// 0.000      Total estimated model params size (MB)
}
