package volt_test

import (
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/metrics"
)

// BenchmarkValidationCurves: one validation run of 32 batches of 64
// examples of 10 classes logging a macro AUROC, exact (every score copied
// to the host, sorted at the epoch's end) or binned over 100 thresholds
// (counts carried in the compiled step). ns/batch is the cost per step,
// the epoch's Compute included.
func BenchmarkValidationCurves(b *testing.B) {
	batches := classificationBatches(5, 6, 10)
	for _, bc := range []struct {
		name       string
		thresholds []float64
	}{{"exact", nil}, {"binned-100", metrics.Linspace(100)}} {
		b.Run(bc.name, func(b *testing.B) {
			auroc, err := metrics.NewAUROC(metrics.Multiclass(10), metrics.Macro, bc.thresholds)
			if err != nil {
				b.Fatal(err)
			}
			tr := testutil.NewTrainer(b, quiet(volt.Config{}))
			m := &curveModule{auroc: auroc}
			benchValidate(b, tr, m, batches)
		})
	}
}

// curveModule logs an AUROC of its inputs (class scores) in its
// validation step.
type curveModule struct {
	boring
	auroc metrics.Metric
}

func (m *curveModule) ValidationStep(s *volt.Step, b volt.Batch) {
	s.LogMetric("val_auroc", m.auroc, graph.Identity(b.Input(0)), b.Label(0))
}
