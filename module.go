package volt

import (
	"fmt"

	"github.com/voltml/volt/data"
)

// Module is the one interface a model must implement: its training step.
//
// TrainingStep is traced into a GoMLX graph (once per input shape, not once
// per batch): build the forward pass on s.Scope(), log with s.Log, and return
// the scalar loss. volt adds the gradients, the optimizer update and the
// logged values to the same compiled graph.
type Module interface {
	TrainingStep(s *Step, b Batch) *Node
}

// ValidationStepper is implemented by modules that can be validated. The step
// is traced into a graph without gradients; values logged with s.Log are
// averaged over the validation epoch (weighted by batch size) by default.
type ValidationStepper interface {
	ValidationStep(s *Step, b Batch)
}

// TestStepper is implemented by modules that can be tested; as ValidationStep.
type TestStepper interface {
	TestStep(s *Step, b Batch)
}

// PredictStepper is implemented by modules that predict: the returned node is
// the prediction for the batch.
type PredictStepper interface {
	PredictStep(s *Step, b Batch) *Node
}

// OptimizerConfigurer is implemented by modules that choose their
// optimizers (Lightning's configure_optimizers); most return
// volt.Optimize(optim.Adam(lr)). Without it volt uses optim.Adam(1e-3).
// As in Lightning, every Fit calls it, a second Fit on the same Trainer too,
// and trains with fresh optimizers and schedulers (their state restored
// from the checkpoint when the Fit resumes one).
type OptimizerConfigurer interface {
	ConfigureOptimizers() Optimizers
}

// Batch is a batch as graph nodes, handed to the step functions. Floating-point
// arrays arrive in the trainer's precision. A batch from a
// data.CombinedLoader holds the parts of several loaders: Part(name) returns
// one of them.
type Batch struct {
	Inputs []*Node
	Labels []*Node
	// Parts describes a combined batch (nil otherwise).
	Parts []data.Part
}

// Part returns the part of a combined batch that came from the loader named
// name, and whether it is present (an exhausted loader in data.MaxSize mode
// contributes nothing).
func (b Batch) Part(name string) (Batch, bool) {
	in, lab := 0, 0
	for _, p := range b.Parts {
		if p.Name == name {
			return Batch{Inputs: b.Inputs[in : in+p.NumInputs], Labels: b.Labels[lab : lab+p.NumLabels]}, true
		}
		in += p.NumInputs
		lab += p.NumLabels
	}
	return Batch{}, false
}

// Input returns input i, panicking with a clear message when there is none.
func (b Batch) Input(i int) *Node {
	if i < 0 || i >= len(b.Inputs) {
		panic(fmt.Sprintf("volt.Batch.Input(%d): the batch has %d inputs", i, len(b.Inputs)))
	}
	return b.Inputs[i]
}

// Label returns label i, panicking with a clear message when there is none.
func (b Batch) Label(i int) *Node {
	if i < 0 || i >= len(b.Labels) {
		panic(fmt.Sprintf("volt.Batch.Label(%d): the batch has %d labels", i, len(b.Labels)))
	}
	return b.Labels[i]
}
