package callback_test

import (
	"fmt"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
)

// EMAWeightAveraging keeps ema = Decay·ema + (1−Decay)·w after every
// optimizer step, validates with the average and copies it into the
// weights when training ends.
func ExampleEMAWeightAveraging() {
	ema := callback.NewEMAWeightAveraging(callback.EMAWeightAveragingConfig{Decay: 0.5})
	trainer := exFit(volt.Config{
		MaxEpochs:            3,
		DisableCheckpointing: true,
		Callbacks:            []volt.Callback{ema},
	}, exLine{LR: 0.05}, exData())
	const weights = "/dense/dense/weights"
	updates, err := ema.NumAveraged(trainer)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d updates over %d steps; average in %s\n", updates, trainer.GlobalStep(), ema.AveragePath(weights))
	fmt.Printf("sum of weights %.4f, of their average %.4f\n", exWeightSum(trainer, weights), exWeightSum(trainer, ema.AveragePath(weights)))
	// Output:
	// 12 updates over 12 steps; average in /volt/ema/avg/dense/dense/weights
	// sum of weights 2.8907, of their average 2.8907
}

// StochasticWeightAveraging averages the weights at the end of the last
// epochs (from StartEpoch, counted from 1) while annealing the learning rate
// to SWALRs over AnnealingEpochs, and puts the mean in the weights at the end.
// LearningRateMonitor shows the annealed rate.
func ExampleStochasticWeightAveraging() {
	swa := callback.NewStochasticWeightAveraging(callback.StochasticWeightAveragingConfig{
		SWALRs:            []float64{0.01},
		StartEpoch:        3,
		AnnealingEpochs:   2,
		AnnealingStrategy: "linear",
	})
	lrs := callback.NewLearningRateMonitor(callback.LearningRateMonitorConfig{})
	probe := exEpochProbe{func(t *volt.Trainer) {
		fmt.Printf("epoch %d: lr-SGD=%.3f\n", t.CurrentEpoch(), t.CallbackMetrics()["lr-SGD"])
	}}
	trainer := exFit(volt.Config{
		MaxEpochs:            5,
		DisableCheckpointing: true,
		Callbacks:            []volt.Callback{swa, lrs, probe},
	}, exLine{LR: 0.05}, exData())
	const weights = "/dense/dense/weights"
	fmt.Println("first averaged epoch:", swa.StartEpochIndex())
	fmt.Printf("sum of weights %.4f, of their mean %.4f\n", exWeightSum(trainer, weights), exWeightSum(trainer, swa.AveragePath(weights)))
	// Output:
	// epoch 0: lr-SGD=0.050
	// epoch 1: lr-SGD=0.050
	// epoch 2: lr-SGD=0.050
	// epoch 3: lr-SGD=0.030
	// epoch 4: lr-SGD=0.010
	// first averaged epoch: 2
	// sum of weights 3.1903, of their mean 3.1903
}
