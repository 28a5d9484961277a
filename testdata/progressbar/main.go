// Command progressbar is testdata/lightning/progress_bar/small_run.py in
// volt, with the default progress bar and console messages, for
// TestDefaultProgressBarInTmux: 64 training examples in batches of 4, 8
// validation examples, 3 epochs, train_loss and val_loss in the bar, then a
// test run. Usage: progressbar ROOT_DIR.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

type module struct{ testutil.Boring }

func (m *module) ValidationStep(s *volt.Step, b volt.Batch) {
	mse := loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.Forward(s, b.Input(0))})
	s.Log("val_loss", mse, volt.ProgBar)
}

// OnTrainBatchEnd slows training down enough for the bar to be redrawn.
func (m *module) OnTrainBatchEnd(*volt.Trainer, *volt.StepOutput, *data.Batch, int) error {
	time.Sleep(20 * time.Millisecond)
	return nil
}

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(root string) error {
	loaders := volt.Loaders{
		Train: &data.DataLoader{Dataset: testutil.Regression(64, 1), BatchSize: 4},
		Val:   []data.Loader{&data.DataLoader{Dataset: testutil.Regression(8, 2), BatchSize: 4}},
		Test:  []data.Loader{&data.DataLoader{Dataset: testutil.Regression(8, 3), BatchSize: 4}},
	}
	t, err := volt.NewTrainer(volt.Config{MaxEpochs: 3, DefaultRootDir: root, DisableModelSummary: true})
	if err != nil {
		return err
	}
	m := &module{}
	if err := t.Fit(context.Background(), m, loaders); err != nil {
		return err
	}
	_, err = t.Test(context.Background(), m, loaders)
	return err
}
