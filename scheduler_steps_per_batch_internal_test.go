package volt

import (
	"slices"
	"testing"

	"github.com/voltml/volt/optim"
)

// stepCounter is a scheduler that records the global step of each of its
// steps.
type stepCounter struct {
	t     **Trainer
	steps []int64
}

func (s *stepCounter) Start(base float64) float64 { return base }
func (s *stepCounter) Step(float64) float64 {
	s.steps = append(s.steps, (*s.t).GlobalStep())
	return 0.1
}
func (s *stepCounter) LR() float64              { return 0.1 }
func (s *stepCounter) State() ([]byte, error)   { return []byte("{}"), nil }
func (s *stepCounter) LoadState(b []byte) error { return nil }

// TestStepSchedulerStepsOncePerBatchWithSeveralSteps: a batch that takes
// several optimizer steps (manual optimization) steps an IntervalStep
// scheduler once, by Lightning's rule on the batch index: with frequency 2
// after batches 1 and 3 of each epoch, whatever the global step.
func TestStepSchedulerStepsOncePerBatchWithSeveralSteps(t *testing.T) {
	var tr *Trainer
	sched := &stepCounter{t: &tr}
	m := manualUntraced{untraced{opts: Optimizers{{Optimizer: optim.SGD(0.1), Scheduler: sched, Interval: IntervalStep, SchedulerFrequency: 2}}}}
	rec := &batchRecorder{before: func(t *Trainer, _ int) { tr = t }}
	// 4 batches of 2 per epoch, 2 optimizer steps per batch, 2 epochs.
	if _, err := fakeFit(t, Config{MaxEpochs: 2}, m, 8, &fakeSteps{manualSteps: 2}, rec); err != nil {
		t.Fatal(err)
	}
	if want := []int64{4, 8, 12, 16}; !slices.Equal(sched.steps, want) {
		t.Errorf("scheduler stepped at global steps %v, want %v", sched.steps, want)
	}
}
