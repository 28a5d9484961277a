package callback_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
)

// EarlyStopping stops Fit when the monitored metric has not improved by
// MinDelta for Patience validation checks: here once the model has
// converged, long before MaxEpochs.
func ExampleEarlyStopping() {
	stop := callback.NewEarlyStopping(callback.EarlyStoppingConfig{Monitor: "val_loss", MinDelta: 0.001, Patience: 2})
	trainer := exFit(volt.Config{
		MaxEpochs:            100,
		DisableCheckpointing: true,
		Callbacks:            []volt.Callback{stop},
	}, exLine{LR: 0.05}, exData())
	fmt.Printf("stopped after %d of 100 epochs, val_loss=%.3f\n", trainer.CurrentEpoch(), trainer.CallbackMetrics()["val_loss"])
	// Output:
	// stopped after 18 of 100 epochs, val_loss=0.000
}

// ModelCheckpoint keeps the best SaveTopK checkpoints by a monitored metric,
// and last.ckpt with SaveLast. FromCheckpoint("best") and
// FromCheckpoint("last") find them.
func ExampleModelCheckpoint() {
	dir, err := os.MkdirTemp("", "volt-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ckpt := callback.NewModelCheckpoint(callback.ModelCheckpointConfig{
		Dirpath:  dir,
		Filename: "{epoch}-{val_loss:.2f}",
		Monitor:  "val_loss",
		SaveTopK: volt.Ptr(2),
		SaveLast: true,
	})
	exFit(volt.Config{MaxEpochs: 4, Callbacks: []volt.Callback{ckpt}}, exLine{LR: 0.05}, exData())
	files, err := filepath.Glob(filepath.Join(dir, "*.ckpt"))
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		fmt.Println(filepath.Base(f))
	}
	score, _ := ckpt.BestModelScore()
	fmt.Printf("best: %s (val_loss %.2f)\n", filepath.Base(ckpt.BestModelPath()), score)
	// Output:
	// epoch=2-val_loss=1.76.ckpt
	// epoch=3-val_loss=0.82.ckpt
	// last.ckpt
	// best: epoch=3-val_loss=0.82.ckpt (val_loss 0.82)
}

// LearningRateMonitor logs each optimizer's learning rate as "lr-<class>",
// here once per epoch (LoggingInterval "step" logs it at every batch).
func ExampleLearningRateMonitor() {
	lrs := callback.NewLearningRateMonitor(callback.LearningRateMonitorConfig{})
	trainer := exFit(volt.Config{
		MaxEpochs:            3,
		DisableCheckpointing: true,
		Callbacks:            []volt.Callback{lrs},
	}, exLine{LR: 0.05}, exData())
	fmt.Println(lrs.Names())
	fmt.Printf("lr-SGD=%.3f\n", trainer.CallbackMetrics()["lr-SGD"])
	// Output:
	// [lr-SGD]
	// lr-SGD=0.050
}
