package tuner

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// sizedData is a data module of n fixed regression rows (4 inputs, 1 label,
// float32: 20 bytes per example) whose batch size the tuner can set.
type sizedData struct {
	rows data.Slice
	size int
}

func newSizedData(n int) *sizedData {
	r := rand.New(rand.NewPCG(1, 2))
	rows := make(data.Slice, n)
	for i := range rows {
		x := []float32{float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())}
		y := []float32{x[0] - 2*x[1] + 0.5*x[2] + 3*x[3] + 0.1}
		rows[i] = data.Example{Inputs: []data.Field{{Value: x}}, Labels: []data.Field{{Value: y}}}
	}
	return &sizedData{rows: rows, size: 8}
}

func (d *sizedData) BatchSize() int     { return d.size }
func (d *sizedData) SetBatchSize(n int) { d.size = n }
func (d *sizedData) TrainDataloader() data.Loader {
	return &data.DataLoader{Dataset: d.rows, BatchSize: d.size}
}

// TestScaleBatchSizeMemoryBudget finds the largest batch within a memory
// budget on CPU: the budget is the model's own share plus 37 examples, so
// binsearch finds 37 and power 32, each trial fits exactly when its estimate
// is within the budget, the data module gets the result and the trainer is
// left byte for byte as it was.
func TestScaleBatchSizeMemoryBudget(t *testing.T) {
	d := loadLinearData(t)
	ctx := context.Background()
	const perExample = 20 // 4 + 1 float32
	// The model's share of the estimate, from one trial at size 1.
	probe, err := ScaleBatchSize(ctx, newTrainer(t, volt.Config{}), &linearModule{LR: 0.01, init: d}, newSizedData(64),
		BatchSizeOptions{InitValue: 1, MaxTrials: 1, StepsPerTrial: 1, MemoryBudget: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	base := probe.Trials[0].MemoryEstimate - perExample
	if base <= 0 {
		t.Fatalf("model share %d bytes: the estimate does not count the variables", base)
	}
	for _, tc := range []struct {
		mode string
		want int
	}{{BinSearch, 37}, {Power, 32}} {
		t.Run(tc.mode, func(t *testing.T) {
			tr := newTrainer(t, volt.Config{MaxSteps: 2})
			m := &linearModule{LR: 0.01, Adam: true, init: d}
			dm := newSizedData(4096)
			if err := tr.Fit(ctx, m, dm); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			before, after := filepath.Join(dir, "before.ckpt"), filepath.Join(dir, "after.ckpt")
			if err := tr.SaveCheckpoint(before, false); err != nil {
				t.Fatal(err)
			}
			// Adam's state is part of the estimate: take the base from this trainer.
			res, err := ScaleBatchSize(ctx, tr, m, dm, BatchSizeOptions{Mode: tc.mode, InitValue: 1, MaxTrials: 1, StepsPerTrial: 1, MemoryBudget: 1 << 40})
			if err != nil {
				t.Fatal(err)
			}
			budget := res.Trials[0].MemoryEstimate - perExample + 37*perExample
			res, err = ScaleBatchSize(ctx, tr, m, dm, BatchSizeOptions{Mode: tc.mode, MemoryBudget: budget})
			if err != nil {
				t.Fatal(err)
			}
			if res.Size != tc.want || dm.BatchSize() != tc.want {
				t.Fatalf("size %d, data module %d, want %d; trials: %s", res.Size, dm.BatchSize(), tc.want, describeTrials(res.Trials))
			}
			for _, tr := range res.Trials {
				if tr.Fits != (tr.MemoryEstimate <= budget) {
					t.Errorf("trial %d: fits %v with estimate %d and budget %d", tr.Size, tr.Fits, tr.MemoryEstimate, budget)
				}
			}
			if err := tr.SaveCheckpoint(after, false); err != nil {
				t.Fatal(err)
			}
			a, _ := os.ReadFile(before)
			b, _ := os.ReadFile(after)
			if len(a) == 0 || !bytes.Equal(a, b) {
				t.Errorf("the trainer's checkpoint changed across ScaleBatchSize (%d vs %d bytes)", len(a), len(b))
			}
		})
	}
}

// TestScaleBatchSizeStepTimeBudget: with a budget no step can meet, no size
// fits and the data module keeps its batch size.
func TestScaleBatchSizeStepTimeBudget(t *testing.T) {
	d := loadLinearData(t)
	dm := newSizedData(256)
	_, err := ScaleBatchSize(context.Background(), newTrainer(t, volt.Config{}), &linearModule{LR: 0.01, init: d}, dm,
		BatchSizeOptions{Mode: BinSearch, StepTimeBudget: time.Nanosecond})
	if err == nil || !strings.Contains(err.Error(), "no batch size fits the budgets") || !strings.Contains(err.Error(), "exceeds StepTimeBudget 1ns") {
		t.Fatalf("error %v, want no batch size fits (StepTimeBudget)", err)
	}
	if dm.BatchSize() != 8 {
		t.Errorf("data module batch size %d, want its original 8", dm.BatchSize())
	}
}

// TestScaleBatchSizeBadInput checks that each bad option or argument is an
// error naming it.
func TestScaleBatchSizeBadInput(t *testing.T) {
	d := loadLinearData(t)
	m := &linearModule{LR: 0.1, init: d}
	for _, tc := range []struct {
		name string
		dm   volt.DataModule
		opts BatchSizeOptions
		want string
	}{
		{"no budget", newSizedData(8), BatchSizeOptions{}, "BatchSizeOptions.MemoryBudget, StepTimeBudget: set at least one"},
		{"mode", newSizedData(8), BatchSizeOptions{Mode: "grow", MemoryBudget: 1}, `BatchSizeOptions.Mode: must be "power" or "binsearch", got "grow"`},
		{"init", newSizedData(8), BatchSizeOptions{InitValue: -2, MemoryBudget: 1}, "BatchSizeOptions.InitValue: must be 0 (default 2) or positive, got -2"},
		{"trials", newSizedData(8), BatchSizeOptions{MaxTrials: -1, MemoryBudget: 1}, "BatchSizeOptions.MaxTrials"},
		{"steps", newSizedData(8), BatchSizeOptions{StepsPerTrial: -1, MemoryBudget: 1}, "BatchSizeOptions.StepsPerTrial"},
		{"memory", newSizedData(8), BatchSizeOptions{MemoryBudget: -5}, "BatchSizeOptions.MemoryBudget: must be 0 (none) or a positive number of bytes, got -5"},
		{"time", newSizedData(8), BatchSizeOptions{StepTimeBudget: -time.Second}, "BatchSizeOptions.StepTimeBudget: must be 0 (none) or positive, got -1s"},
		{"not a sizer", d.loaders(), BatchSizeOptions{MemoryBudget: 1}, "does not implement tuner.BatchSizer (BatchSize() int, SetBatchSize(int))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ScaleBatchSize(context.Background(), newTrainer(t, volt.Config{}), m, tc.dm, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// exhausting fails to "allocate" a batch larger than limit, as a GPU's
// backend fails with RESOURCE_EXHAUSTED when it traces and runs the step.
type exhausting struct {
	*linearModule
	limit int
}

func (m exhausting) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	if n := b.Input(0).Shape().Dimensions[0]; n > m.limit {
		panic(fmt.Errorf("RESOURCE_EXHAUSTED: Out of memory while trying to allocate %d bytes", 20*n))
	}
	return m.linearModule.TrainingStep(s, b)
}

// A trial whose step fails to allocate fails (the size does not fit) rather
// than the search, so an allocation failure bounds the search as on a GPU.
func TestScaleBatchSizeAllocationFailureBounds(t *testing.T) {
	d := loadLinearData(t)
	for _, tc := range []struct {
		mode string
		want int
	}{{BinSearch, 37}, {Power, 32}} {
		t.Run(tc.mode, func(t *testing.T) {
			dm := newSizedData(4096)
			res, err := ScaleBatchSize(context.Background(), newTrainer(t, volt.Config{}), exhausting{&linearModule{LR: 0.01, init: d}, 37}, dm,
				BatchSizeOptions{Mode: tc.mode, StepsPerTrial: 1, StepTimeBudget: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if res.Size != tc.want {
				t.Fatalf("size %d, want %d; trials: %s", res.Size, tc.want, describeTrials(res.Trials))
			}
			for _, tr := range res.Trials {
				if tr.Size > 37 && (tr.Fits || !strings.Contains(tr.Reason, "allocation failed: RESOURCE_EXHAUSTED")) {
					t.Errorf("trial %d: fits %v, reason %q; want a failed allocation", tr.Size, tr.Fits, tr.Reason)
				}
			}
		})
	}
}
