package volt_test

import (
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// benchOutputsModule is a dense classifier of 10 classes whose validation
// step logs its loss and, when declare is set, names its logits and labels
// as step outputs.
type benchOutputsModule struct {
	boring
	declare bool
}

func (m *benchOutputsModule) ValidationStep(s *volt.Step, b volt.Batch) {
	logits := layers.DenseWithBias(s.Scope().In("dense"), b.Input(0), 10)
	s.Log("val_loss", graph.ReduceAllMean(graph.Square(logits)))
	if m.declare {
		s.Output("logits", logits)
		s.Output("labels", b.Label(0))
	}
}

// readingCallback reads the logits output of every validation batch.
type readingCallback struct{ rows int }

func (c *readingCallback) ReadsStepOutputs(volt.RunningStage) bool { return true }

func (c *readingCallback) OnValidationBatchEnd(t *volt.Trainer, out *volt.StepOutput, b *data.Batch, _, _ int) error {
	logits, err := out.Output("logits")
	if err != nil {
		return err
	}
	c.rows += logits.Shape().Dimensions[0]
	return nil
}

// progressCallback implements the batch-end hook and reads no output.
type progressCallback struct{ batches int }

func (c *progressCallback) OnValidationBatchEnd(*volt.Trainer, *volt.StepOutput, *data.Batch, int, int) error {
	c.batches++
	return nil
}

// BenchmarkValidationOutputs: one validation run of 32 batches of 64
// examples whose step declares no outputs ("none"), declares logits and
// labels that no hook reads ("unread": a callback implements the batch-end
// hook but not StepOutputReader, so the outputs stay out of the compiled
// step), or declares them for a callback that reads them ("read"). Compare
// with benchstat; ns/batch is the cost per step.
func BenchmarkValidationOutputs(b *testing.B) {
	batches := classificationBatches(3, 4, 32)
	for _, bc := range []struct {
		name     string
		declare  bool
		callback volt.Callback
	}{{"none", false, &progressCallback{}}, {"unread", true, &progressCallback{}}, {"read", true, &readingCallback{}}} {
		b.Run(bc.name, func(b *testing.B) {
			tr := testutil.NewTrainer(b, quiet(volt.Config{Callbacks: []volt.Callback{bc.callback}}))
			m := &benchOutputsModule{declare: bc.declare}
			benchValidate(b, tr, m, batches)
			b.ReportMetric(float64(volt.HostCopies(tr))/float64((b.N+1)*len(batches)), "copies/batch")
		})
	}
}
