package volt

import (
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/internal/engine"
)

// StepOutput is what a step produced, handed to the batch-end hooks. Values
// are read from the device only when asked for.
type StepOutput struct {
	loss *tensors.Tensor
	// Prediction is the predict step's output (nil in other stages).
	Prediction *tensors.Tensor
	// outputs are the named outputs (Step.Output) of an evaluation or
	// predict step, on the host; fetched says the run fetched them.
	outputs map[string]*tensors.Tensor
	fetched bool
	stage   RunningStage
}

// Loss returns the training step's loss (NaN in evaluation stages).
func (o *StepOutput) Loss() float64 {
	if o == nil || o.loss == nil {
		return nan
	}
	v, err := engine.Float64(o.loss)
	if err != nil {
		return nan
	}
	return v
}

// LossTensor returns the loss as a tensor (nil in evaluation stages).
func (o *StepOutput) LossTensor() *tensors.Tensor { return o.loss }

// Output returns, on the host, the value the validation, test or predict
// step gave to Step.Output under name (Lightning's outputs argument of
// on_validation_batch_end). It is an error when the run did not fetch the
// step's outputs (no batch-end hook of the stage reads them: see
// StepOutputReader) or when the step declares no output of that name.
func (o *StepOutput) Output(name string) (*tensors.Tensor, error) {
	if o == nil || o.stage == "" || o.stage == RunningTrain {
		return nil, fmt.Errorf("step output %q: training steps have no named outputs (they are for validation, test and predict steps)", name)
	}
	if !o.fetched {
		return nil, fmt.Errorf("step output %q: this run did not fetch the %s step's outputs; the module's batch-end hook of the stage reads them, a callback's when it implements volt.StepOutputReader", name, o.stage)
	}
	t, ok := o.outputs[name]
	if !ok {
		return nil, fmt.Errorf("step output %q: the %s step declares no such output (it has %q)", name, o.stage, o.OutputNames())
	}
	return t, nil
}

// OutputNames returns the names of the step's outputs the run fetched, sorted.
func (o *StepOutput) OutputNames() []string {
	if o == nil {
		return nil
	}
	names := make([]string, 0, len(o.outputs))
	for n := range o.outputs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
