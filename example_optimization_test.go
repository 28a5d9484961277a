package volt_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
)

// A full checkpoint holds the weights, the optimizer state, the loop
// position and the callbacks' state. Fit with FromCheckpoint resumes where
// it was taken (Lightning's ckpt_path); Test with it loads the weights
// (Lightning's load_from_checkpoint).
func ExampleFromCheckpoint() {
	dir, err := os.MkdirTemp("", "volt-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx, path := context.Background(), filepath.Join(dir, "two-epochs.ckpt")

	first, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 2}))
	if err != nil {
		panic(err)
	}
	if err := first.Fit(ctx, exLine{}, exData()); err != nil {
		panic(err)
	}
	if err := first.SaveCheckpoint(path, false); err != nil {
		panic(err)
	}

	// A new trainer (or a new process) continues to epoch 5.
	resumed, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 5}))
	if err != nil {
		panic(err)
	}
	if err := resumed.Fit(ctx, exLine{}, exData(), volt.FromCheckpoint(path)); err != nil {
		panic(err)
	}
	fmt.Println("resumed run ends at epoch", resumed.CurrentEpoch(), "step", resumed.GlobalStep())

	// Testing from the checkpoint gives the loss of the 2-epoch weights.
	tester, err := volt.NewTrainer(exQuiet(volt.Config{}))
	if err != nil {
		panic(err)
	}
	fromFile, err := tester.Test(ctx, exLine{}, exData(), volt.FromCheckpoint(path))
	if err != nil {
		panic(err)
	}
	atTwo, err := first.Test(ctx, exLine{}, exData())
	if err != nil {
		panic(err)
	}
	fmt.Printf("test_loss from the file %.3f, of the first trainer %.3f\n", fromFile[0]["test_loss"], atTwo[0]["test_loss"])
	// Output:
	// resumed run ends at epoch 5 step 20
	// test_loss from the file 1.863, of the first trainer 1.863
}

// exScheduled is exLine with Adam and a StepLR schedule stepped each epoch.
type exScheduled struct{ exLine }

func (exScheduled) ConfigureOptimizers() volt.Optimizers {
	sched := optim.NewStepLR(2, 0.5) // halve every 2 epochs; Fit checks its fields
	return volt.Optimizers{{Optimizer: optim.Adam(0.1), Scheduler: sched, Interval: volt.IntervalEpoch}}
}

// exLRPrinter prints the learning rate each epoch starts with.
type exLRPrinter struct{}

func (exLRPrinter) OnTrainEpochStart(t *volt.Trainer) error {
	fmt.Printf("epoch %d lr %.4f\n", t.CurrentEpoch(), t.LearningRates()[0])
	return nil
}

// A scheduler sets the learning rate on the host, at each epoch (the
// default) or each step (IntervalStep); the compiled step reads it from a
// variable and is never recompiled.
func ExampleOptimizerSetup_scheduler() {
	trainer, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 5, Callbacks: []volt.Callback{exLRPrinter{}}}))
	if err != nil {
		panic(err)
	}
	if err := trainer.Fit(context.Background(), exScheduled{}, exData()); err != nil {
		panic(err)
	}
	// Output:
	// epoch 0 lr 0.1000
	// epoch 1 lr 0.1000
	// epoch 2 lr 0.0500
	// epoch 3 lr 0.0500
	// epoch 4 lr 0.0250
}

// exTwoParts has two layers, /a and /b, each updated by its own optimizer.
type exTwoParts struct{ manual bool }

func (m exTwoParts) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	x := b.Input(0)
	pred := graph.Add(layers.DenseWithBias(s.Scope().In("a"), x, 1), layers.DenseWithBias(s.Scope().In("b"), x, 1))
	l := loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
	if m.manual {
		// Manual optimization: the step calls each optimizer itself
		// (Lightning's opt.step() after self.manual_backward(loss)).
		for _, opt := range s.Optimizers() {
			opt.Step(l)
		}
	}
	s.Log("train_loss", l)
	return l
}

func (exTwoParts) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimizers{
		{Optimizer: optim.SGD(0.02), Params: []string{"/a"}},
		{Optimizer: optim.Adam(0.05), Params: []string{"/b"}, Frequency: 2},
	}
}

// AutomaticOptimization implements volt.AutomaticOptimizer.
func (m exTwoParts) AutomaticOptimization() bool { return !m.manual }

// Several optimizers each own some variables (Params, by scope). With
// Frequency, automatic optimization alternates them batch by batch, as
// Lightning 1.x did: here /a for one batch, then /b for two. Each batch is one
// global step.
func ExampleOptimizers() {
	trainer, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 3}))
	if err != nil {
		panic(err)
	}
	if err := trainer.Fit(context.Background(), exTwoParts{}, exData()); err != nil {
		panic(err)
	}
	fmt.Println("optimizers:", len(trainer.Optimizers()), "global step:", trainer.GlobalStep())
	// Output:
	// optimizers: 2 global step: 12
}

// With AutomaticOptimization returning false the training step steps the
// optimizers itself through Step.Optimizers; every optimizer step counts in
// the global step, as in Lightning.
func ExampleAutomaticOptimizer() {
	trainer, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 3}))
	if err != nil {
		panic(err)
	}
	if err := trainer.Fit(context.Background(), exTwoParts{manual: true}, exData()); err != nil {
		panic(err)
	}
	fmt.Printf("global step: %d, train_loss=%.2f\n", trainer.GlobalStep(), trainer.CallbackMetrics()["train_loss"])
	// Output:
	// global step: 24, train_loss=4.75
}

// Config.Precision takes Lightning's precision flags. "bf16-mixed" computes
// the model in bfloat16 while the optimizer updates float32 master weights
// (under /volt/master), cast to the compute copy after each step.
func ExampleConfig_precision() {
	for _, precision := range []string{"32-true", "bf16-mixed", "64-true"} {
		trainer, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 10, Precision: precision}))
		if err != nil {
			panic(err)
		}
		if err := trainer.Fit(context.Background(), exLine{}, exData()); err != nil {
			panic(err)
		}
		test, err := trainer.Test(context.Background(), exLine{}, exData())
		if err != nil {
			panic(err)
		}
		dtypes := map[string]string{}
		for v := range trainer.Store().IterVariables() {
			if strings.HasSuffix(v.Path(), "/dense/dense/weights") {
				dtypes[v.Path()] = v.Shape().DType.String()
			}
		}
		fmt.Printf("%s: test_loss %.2f, weights %v\n", precision, test[0]["test_loss"], dtypes)
	}
	// Output:
	// 32-true: test_loss 0.02, weights map[/dense/dense/weights:Float32]
	// bf16-mixed: test_loss 0.02, weights map[/dense/dense/weights:BFloat16 /volt/master/dense/dense/weights:Float32]
	// 64-true: test_loss 0.11, weights map[/dense/dense/weights:Float64]
}
