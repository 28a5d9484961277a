package volt_test

import (
	"context"
	"fmt"
	"math"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/metrics"
)

// exResiduals is exLine whose test step names its residuals as a step
// output (Lightning's test_step returning a dict) and also folds them into
// a CatMetric, whose value is every residual of the test set.
type exResiduals struct{ exLine }

func (exResiduals) TestStep(s *volt.Step, b volt.Batch) {
	pred := layers.DenseWithBias(s.Scope().In("dense"), b.Input(0), 1)
	residual := graph.Sub(pred, b.Label(0))
	s.Output("residual", residual)
	s.UpdateMetric("test_residuals", metrics.CatMetric{}, residual, nil)
}

// exWorstResidual is a callback that reads the test step's outputs: it
// says so with ReadsStepOutputs, and volt copies them to the host for it.
type exWorstResidual struct{ worst float64 }

func (w *exWorstResidual) ReadsStepOutputs(stage volt.RunningStage) bool {
	return stage == volt.RunningTest
}

func (w *exWorstResidual) OnTestBatchEnd(_ *volt.Trainer, out *volt.StepOutput, _ *data.Batch, _, _ int) error {
	r, err := out.Output("residual")
	if err != nil {
		return err
	}
	for _, v := range tensors.MustCopyFlatData[float32](r) {
		w.worst = max(w.worst, math.Abs(float64(v)))
	}
	return nil
}

// A callback reads what a test step names with Step.Output in its
// OnTestBatchEnd, batch by batch, on the host; Trainer.MetricValue reads a
// metric updated over the whole test set (here every residual, a vector no
// scalar log could hold).
func ExampleStepOutputReader() {
	worst := &exWorstResidual{}
	trainer, err := volt.NewTrainer(exQuiet(volt.Config{
		MaxEpochs: 3,
		Callbacks: []volt.Callback{worst},
	}))
	if err != nil {
		panic(err)
	}
	m := exResiduals{}
	if err := trainer.Fit(context.Background(), m, exData()); err != nil {
		panic(err)
	}
	if _, err := trainer.Test(context.Background(), m, exData()); err != nil {
		panic(err)
	}
	all, err := trainer.MetricValue("test_residuals")
	if err != nil {
		panic(err)
	}
	largest := 0.0
	for _, v := range all.Data {
		largest = max(largest, math.Abs(v))
	}
	fmt.Printf("%d residuals; worst seen by the callback %.3f, in the metric %.3f\n", len(all.Data), worst.worst, largest)
	// Output:
	// 16 residuals; worst seen by the callback 1.822, in the metric 1.822
}
