package volt_test

import (
	"context"
	"fmt"

	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
)

// exOneCycle is exLine with a one-cycle schedule over the whole run: its
// length is the trainer's estimate, read in ConfigureOptimizers.
type exOneCycle struct {
	exLine
	trainer *volt.Trainer
}

// Setup keeps the trainer for ConfigureOptimizers (Lightning's self.trainer).
func (m *exOneCycle) Setup(t *volt.Trainer, _ volt.Stage) error { m.trainer = t; return nil }

func (m *exOneCycle) ConfigureOptimizers() volt.Optimizers {
	total, err := m.trainer.EstimatedSteppingBatches()
	if err != nil {
		panic(err) // volt turns a panic in ConfigureOptimizers into Fit's error
	}
	fmt.Println("one cycle over", total, "steps")
	sched := optim.NewOneCycleLR(0.1, int(total))
	return volt.Optimizers{{Optimizer: optim.SGD(0.1), Scheduler: sched, Interval: volt.IntervalStep}}
}

// A one-cycle schedule needs the number of optimization steps of the run:
// here 4 batches per epoch in accumulation windows of 3 make two steps per
// epoch (the second window is partial and still steps), for 3 epochs.
func ExampleTrainer_EstimatedSteppingBatches() {
	t, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 3, AccumulateGradBatches: 3}))
	if err != nil {
		panic(err)
	}
	if err := t.Fit(context.Background(), &exOneCycle{}, exData()); err != nil {
		panic(err)
	}
	fmt.Println("steps taken", t.GlobalStep())
	// Output:
	// one cycle over 6 steps
	// steps taken 6
}
