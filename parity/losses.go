package parity

import (
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// Losses is a callback that records the loss of every training batch, in
// order (the loss each step computed, before its update, as PyTorch's
// loss.item()).
type Losses struct {
	Values []float64
}

// OnTrainBatchEnd records the batch's loss.
func (l *Losses) OnTrainBatchEnd(_ *volt.Trainer, out *volt.StepOutput, _ *data.Batch, _ int) error {
	l.Values = append(l.Values, out.Loss())
	return nil
}
