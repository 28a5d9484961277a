package volt

import (
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt/data"
)

// batchCounter counts training batch hooks without allocating.
type batchCounter struct{ starts, ends int }

func (c *batchCounter) OnTrainBatchStart(*Trainer, *data.Batch, int) error { c.starts++; return nil }
func (c *batchCounter) OnTrainBatchEnd(*Trainer, *StepOutput, *data.Batch, int) error {
	c.ends++
	return nil
}

// stepOnly is a module with no hooks.
type stepOnly struct{}

func (stepOnly) TrainingStep(*Step, Batch) *graph.Node { return nil }

// dispatchTrainer returns a trainer whose run hooks are two counters and a
// module without hooks.
func dispatchTrainer() (*Trainer, *batchCounter, *batchCounter) {
	a, b := &batchCounter{}, &batchCounter{}
	return &Trainer{hooks: resolveHooks([]Callback{a, b}, false, stepOnly{}, nil), run: &run{}}, a, b
}

// Per-batch dispatch runs once per hook per batch: it must not allocate.
func TestBatchDispatchDoesNotAllocate(t *testing.T) {
	tr, a, b := dispatchTrainer()
	batch, out := &data.Batch{Size: 4}, &StepOutput{}
	allocs := testing.AllocsPerRun(100, func() {
		if err := tr.emit(hookOnTrainBatchStart, hookArgs{batch: batch, batchIdx: 3}); err != nil {
			t.Fatal(err)
		}
		if err := tr.emit(hookOnTrainBatchEnd, hookArgs{out: out, batch: batch, batchIdx: 3}); err != nil {
			t.Fatal(err)
		}
		if err := tr.emit(hookOnValidationBatchEnd, hookArgs{out: out, batch: batch}); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("batch hook dispatch allocates %v times per batch, want 0", allocs)
	}
	if a.starts != 101 || b.ends != 101 {
		t.Errorf("hooks called %d/%d times, want 101 (AllocsPerRun's warm-up and 100 runs)", a.starts, b.ends)
	}
	if tr.run.inHook != hookNone {
		t.Errorf("current hook after dispatch is %d, want none", tr.run.inHook)
	}
}

// BenchmarkBatchDispatch is the per-batch cost of the training batch hooks
// with two callbacks implementing both.
func BenchmarkBatchDispatch(b *testing.B) {
	tr, _, _ := dispatchTrainer()
	batch, out := &data.Batch{Size: 4}, &StepOutput{}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := tr.emit(hookOnTrainBatchStart, hookArgs{batch: batch, batchIdx: i}); err != nil {
			b.Fatal(err)
		}
		if err := tr.emit(hookOnTrainBatchEnd, hookArgs{out: out, batch: batch, batchIdx: i}); err != nil {
			b.Fatal(err)
		}
	}
}
