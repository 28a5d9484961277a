package callback_test

import (
	"fmt"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
)

// exClock is a clock that moves one second each time it is read, so that
// the example does not depend on the machine's speed.
type exClock struct{ now time.Time }

func (c *exClock) Now() time.Time {
	c.now = c.now.Add(time.Second)
	return c.now
}

// Timer stops Fit once MaxTime of training has passed (Lightning's
// max_time), checked after every training batch by default.
func ExampleTimer() {
	clock := &exClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	maxTime, err := callback.ParseDuration("00:00:00:10") // DD:HH:MM:SS
	if err != nil {
		panic(err)
	}
	timer := callback.NewTimer(callback.TimerConfig{MaxTime: maxTime, Now: clock.Now})
	trainer := exFit(volt.Config{
		MaxEpochs:            100,
		DisableCheckpointing: true,
		Callbacks:            []volt.Callback{timer},
	}, exLine{LR: 0.05}, exData())
	fmt.Println("max time", maxTime, "stopped at step", trainer.GlobalStep(), "of 400")
	// Output:
	// max time 10s stopped at step 8 of 400
}

// GradientAccumulationScheduler changes AccumulateGradBatches by epoch:
// here 1 batch per step in epoch 0, then 2, then 4 from epoch 2 on.
func ExampleGradientAccumulationScheduler() {
	sched := callback.NewGradientAccumulationScheduler(callback.GradientAccumulationSchedulerConfig{
		Scheduling: map[int]int{0: 1, 1: 2, 2: 4},
	})
	steps := &exStepsPerEpoch{}
	exFit(volt.Config{
		MaxEpochs:            4,
		DisableCheckpointing: true,
		Callbacks:            []volt.Callback{sched, steps},
	}, exLine{LR: 0.05}, exData())
	fmt.Println("global step at each epoch end:", steps.at)
	// Output:
	// global step at each epoch end: [4 6 7 8]
}

// exStepsPerEpoch records the global step at each epoch end.
type exStepsPerEpoch struct{ at []int64 }

func (s *exStepsPerEpoch) OnTrainEpochEnd(t *volt.Trainer) error {
	s.at = append(s.at, t.GlobalStep())
	return nil
}
