package resumeprop

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// ErrPlanned is the text of every planned failure (errors and panics).
const ErrPlanned = "resumeprop: planned crash"

// crasher fails the run at its crash's hook, once.
type crasher struct {
	c     Crash
	fired bool
}

func (c *crasher) at(t *volt.Trainer, hook string) error {
	if c.fired || hook != c.c.Hook || t.GlobalRank() != c.c.Rank || t.State().Stage == volt.RunningSanityCheck {
		return nil
	}
	if n := t.Progress().TrainBatch.Total.Processed; n < c.c.AtBatch {
		return nil
	}
	c.fired = true
	msg := fmt.Sprintf("%s (%s) in %s after %d training batches on rank %d", ErrPlanned, c.c.Kind, hook, t.Progress().TrainBatch.Total.Processed, t.GlobalRank())
	if c.c.Kind == "panic" {
		panic(msg)
	}
	return fmt.Errorf("%s", msg)
}

func (c *crasher) OnTrainBatchStart(t *volt.Trainer, _ *data.Batch, _ int) error {
	return c.at(t, "train_batch_start")
}
func (c *crasher) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	return c.at(t, "train_batch_end")
}
func (c *crasher) OnValidationBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _, _ int) error {
	return c.at(t, "validation_batch_end")
}
func (c *crasher) OnValidationEnd(t *volt.Trainer) error   { return c.at(t, "validation_end") }
func (c *crasher) OnTrainEpochEnd(t *volt.Trainer) error   { return c.at(t, "train_epoch_end") }
func (c *crasher) OnTrainEpochStart(t *volt.Trainer) error { return c.at(t, "train_epoch_start") }

// announcer writes "STEP <rank> <processed> <pid>" after every training
// batch end, for a parent process that kills this one.
type announcer struct {
	w     io.Writer
	pause time.Duration
}

func (a *announcer) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	fmt.Fprintf(a.w, "STEP %d %d %d\n", t.GlobalRank(), t.Progress().TrainBatch.Total.Processed, os.Getpid())
	if a.pause > 0 {
		time.Sleep(a.pause)
	}
	return nil
}
