package volt_test

import (
	"context"
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
)

// exFrozenBias is exLine whose OnAfterBackward zeroes the bias gradient.
// It runs while the training step is traced, once, not per batch: the
// change is compiled into the step.
type exFrozenBias struct {
	exLine
	traces *int
}

// OnAfterBackward implements volt.OnAfterBackward.
func (m exFrozenBias) OnAfterBackward(s *volt.Step, grads []volt.Gradient) {
	*m.traces++
	for i, g := range grads {
		if g.Variable.Name() == "biases" {
			grads[i].Value = graph.ZerosLike(g.Value)
		}
	}
}

// The gradient hooks (OnBeforeBackward, OnAfterBackward,
// OnBeforeOptimizerStep) run at trace time and may replace gradient nodes.
// Here the bias never moves from its initial zero although 12 batches train.
func ExampleOnAfterBackward() {
	traces := 0
	trainer, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 3}))
	if err != nil {
		panic(err)
	}
	if err := trainer.Fit(context.Background(), exFrozenBias{traces: &traces}, exData()); err != nil {
		panic(err)
	}
	for v := range trainer.Store().IterVariables() {
		if v.Name() == "biases" {
			value, err := v.Value()
			if err != nil {
				panic(err)
			}
			fmt.Println(v.Path(), value.Value())
		}
	}
	fmt.Println("steps:", trainer.GlobalStep(), "traces:", traces)
	// Output:
	// /dense/dense/biases [0]
	// steps: 12 traces: 1
}

// The global step counts optimizer updates: with AccumulateGradBatches 2,
// 4 batches per epoch make 2 steps.
func ExampleConfig_accumulateGradBatches() {
	trainer, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 3, AccumulateGradBatches: 2}))
	if err != nil {
		panic(err)
	}
	if err := trainer.Fit(context.Background(), exLine{}, exData()); err != nil {
		panic(err)
	}
	fmt.Println("global step after 3 epochs of 4 batches:", trainer.GlobalStep())
	// Output:
	// global step after 3 epochs of 4 batches: 6
}
