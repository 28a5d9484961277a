package volt

import (
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/internal/engine"
)

// StepOutput is what a step produced, handed to the batch-end hooks. Values
// are read from the device only when asked for.
type StepOutput struct {
	loss *tensors.Tensor
	// Prediction is the predict step's output (nil in other stages).
	Prediction *tensors.Tensor
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
