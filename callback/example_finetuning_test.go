package callback_test

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/optim"
)

// exBackboneHead is a "pretrained" backbone (a dense layer of 8 features to
// 4, under /backbone) and a head (4 to 1, under /head).
type exBackboneHead struct{}

// TrainingStep implements volt.Module.
func (exBackboneHead) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	features := layers.DenseWithBias(s.Scope().In("backbone"), b.Input(0), 4)
	pred := layers.DenseWithBias(s.Scope().In("head"), features, 1)
	l := loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
	s.Log("train_loss", l)
	return l
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (exBackboneHead) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimize(optim.SGD(0.01))
}

// exWeightSum returns the sum of a float32 variable's values.
func exWeightSum(t *volt.Trainer, path string) float64 {
	sum := 0.0
	for _, v := range tensors.MustCopyFlatData[float32](t.Store().GetVariable(path).MustValue()) {
		sum += float64(v)
	}
	return sum
}

// exEpochProbe calls Report at the end of every training epoch.
type exEpochProbe struct{ Report func(t *volt.Trainer) }

// OnTrainEpochEnd implements volt.OnTrainEpochEnd.
func (p exEpochProbe) OnTrainEpochEnd(t *volt.Trainer) error {
	p.Report(t)
	return nil
}

// BackboneFinetuning keeps /backbone frozen until UnfreezeAtEpoch, then
// trains it at InitialRatio of the optimizer's learning rate, a rate that
// grows by Multiplier each epoch up to the optimizer's own.
func ExampleBackboneFinetuning() {
	finetune := callback.NewBackboneFinetuning(callback.BackboneFinetuningConfig{
		UnfreezeAtEpoch: 2,
		InitialRatio:    0.25,
		Multiplier:      2,
	})
	const weights = "/backbone/dense/weights"
	var before float64
	probe := exEpochProbe{func(t *volt.Trainer) {
		sum := exWeightSum(t, weights)
		if t.CurrentEpoch() == 0 {
			before = sum
		}
		fmt.Printf("epoch %d: frozen=%t lr scale=%.2f backbone moved=%t\n",
			t.CurrentEpoch(), finetune.Frozen(weights), finetune.LRScale(), sum != before)
	}}
	exFit(volt.Config{
		MaxEpochs:            5,
		DisableCheckpointing: true,
		Callbacks:            []volt.Callback{finetune, probe},
	}, exBackboneHead{}, exData())
	// Output:
	// epoch 0: frozen=true lr scale=0.00 backbone moved=false
	// epoch 1: frozen=true lr scale=0.00 backbone moved=false
	// epoch 2: frozen=false lr scale=0.25 backbone moved=true
	// epoch 3: frozen=false lr scale=0.50 backbone moved=true
	// epoch 4: frozen=false lr scale=1.00 backbone moved=true
}

// Finetuning is the general schedule: scopes frozen when Fit starts, and
// steps that unfreeze some of them at an epoch's start, each as a new
// parameter group of an optimizer with its own learning-rate multiplier.
func ExampleFinetuning() {
	finetune := callback.NewFinetuning(callback.FinetuningConfig{
		Freeze:   []string{"/backbone"},
		Schedule: []callback.FinetuneStep{{Epoch: 2, Unfreeze: []string{"/backbone"}, LRScale: 0.5}},
	})
	probe := exEpochProbe{func(t *volt.Trainer) {
		fmt.Printf("epoch %d: steps applied=%d, backbone frozen=%t, head frozen=%t\n", t.CurrentEpoch(),
			finetune.Applied(), finetune.Frozen("/backbone/dense/weights"), finetune.Frozen("/head/dense/weights"))
	}}
	exFit(volt.Config{
		MaxEpochs:            4,
		DisableCheckpointing: true,
		Callbacks:            []volt.Callback{finetune, probe},
	}, exBackboneHead{}, exData())
	group, applied := finetune.Group(0)
	fmt.Printf("applied=%t: the unfrozen backbone is optimizer 0's Groups[%d]\n", applied, group)
	// Output:
	// epoch 0: steps applied=0, backbone frozen=true, head frozen=false
	// epoch 1: steps applied=0, backbone frozen=true, head frozen=false
	// epoch 2: steps applied=1, backbone frozen=false, head frozen=false
	// epoch 3: steps applied=1, backbone frozen=false, head frozen=false
	// applied=true: the unfrozen backbone is optimizer 0's Groups[0]
}
