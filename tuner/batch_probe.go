package tuner

import (
	"fmt"
	"time"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// BatchTrial is one trial of the batch-size search.
type BatchTrial struct {
	Size int
	Fits bool
	// MemoryEstimate is the largest estimate seen during the trial, in bytes
	// (see BatchSizeOptions.MemoryBudget).
	MemoryEstimate int64
	// StepTime is the mean time of the steps after the first (the first's
	// when the trial ran one step).
	StepTime time.Duration
	// Reason says why the trial did not fit ("" when it did).
	Reason string
}

// batchProbe is the callback of a trial: it measures the steps and stops the
// trial as soon as a budget is exceeded.
type batchProbe struct {
	opts  BatchSizeOptions
	trial *BatchTrial
	start time.Time
	steps []time.Duration
}

// OnTrainBatchStart starts the step's clock.
func (p *batchProbe) OnTrainBatchStart(*volt.Trainer, *data.Batch, int) error {
	p.start = time.Now()
	return nil
}

// OnTrainBatchEnd checks the memory estimate and the step time.
func (p *batchProbe) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, b *data.Batch, _ int) error {
	p.steps = append(p.steps, time.Since(p.start))
	est := variableBytes(t) + batchBytes(b)
	p.trial.MemoryEstimate = max(p.trial.MemoryEstimate, est)
	if p.opts.MemoryBudget > 0 && est > p.opts.MemoryBudget {
		p.fail(t, fmt.Sprintf("estimated memory %d bytes exceeds MemoryBudget %d", est, p.opts.MemoryBudget))
	}
	return nil
}

// fail marks the trial as not fitting and stops it.
func (p *batchProbe) fail(t *volt.Trainer, reason string) {
	if p.trial.Reason == "" {
		p.trial.Reason = reason
	}
	t.Stop("tuner.ScaleBatchSize: batch size " + fmt.Sprint(p.trial.Size) + ": " + reason)
}

// finish computes the step time and checks its budget.
func (p *batchProbe) finish() {
	steps := p.steps
	if len(steps) > 1 {
		steps = steps[1:]
	}
	var sum time.Duration
	for _, s := range steps {
		sum += s
	}
	if len(steps) > 0 {
		p.trial.StepTime = sum / time.Duration(len(steps))
	}
	if p.opts.StepTimeBudget > 0 && p.trial.StepTime > p.opts.StepTimeBudget && p.trial.Reason == "" {
		p.trial.Reason = fmt.Sprintf("mean step time %v exceeds StepTimeBudget %v", p.trial.StepTime, p.opts.StepTimeBudget)
	}
	p.trial.Fits = p.trial.Reason == "" && len(p.steps) > 0
	if len(p.steps) == 0 && p.trial.Reason == "" {
		p.trial.Reason = "the trial ran no step"
	}
}

// variableBytes is the memory of the trainer's variables, plus that of the
// gradients of the trainable ones.
func variableBytes(t *volt.Trainer) int64 {
	s := t.Store()
	if s == nil {
		return 0
	}
	var n int64
	for v := range s.IterVariables() {
		b := v.Shape().ByteSize()
		n += b
		if v.Trainable {
			n += b
		}
	}
	return n
}

// batchBytes is the memory of a batch's tensors.
func batchBytes(b *data.Batch) int64 {
	if b == nil {
		return 0
	}
	var n int64
	for _, ts := range [][]*tensors.Tensor{b.Inputs, b.Labels} {
		for _, x := range ts {
			if x != nil {
				n += x.Shape().ByteSize()
			}
		}
	}
	return n
}
