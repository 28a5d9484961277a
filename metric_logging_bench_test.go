package volt_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/metrics"
)

// benchMetricModule is a dense classifier of 10 classes whose validation
// step logs its metrics (none, or three).
type benchMetricModule struct {
	boring
	metrics    []metrics.Metric
	collection *metrics.Collection
}

func (m *benchMetricModule) ValidationStep(s *volt.Step, b volt.Batch) {
	logits := layers.DenseWithBias(s.Scope().In("dense"), b.Input(0), 10)
	s.Log("val_loss", graph.ReduceAllMean(graph.Square(logits)))
	for i, mt := range m.metrics {
		s.LogMetric([]string{"val_f1", "val_acc", "val_precision"}[i], mt, logits, b.Label(0))
	}
	if m.collection != nil {
		s.LogMetrics(m.collection, logits, b.Label(0))
	}
}

// BenchmarkValidationMetrics: one validation run of 32 batches of 64
// examples logging no metric object, or three (macro F1, accuracy, weighted
// precision), each on its own or as one Collection (one set of counts).
// Compare the two with benchstat; ns/batch is the cost per step.
func BenchmarkValidationMetrics(b *testing.B) {
	batches := classificationBatches(1, 2, 32)
	must := func(m *metrics.StatScoresMetric, err error) metrics.Metric {
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
	three := []metrics.Metric{
		must(metrics.NewF1(metrics.Multiclass(10), metrics.Macro)),
		must(metrics.NewAccuracy(metrics.Multiclass(10), metrics.Micro)),
		must(metrics.NewPrecision(metrics.Multiclass(10), metrics.Weighted)),
	}
	shared, err := metrics.NewCollection(metrics.Named{Name: "val_f1", Metric: three[0]},
		metrics.Named{Name: "val_acc", Metric: three[1]}, metrics.Named{Name: "val_precision", Metric: three[2]})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name       string
		metrics    []metrics.Metric
		collection *metrics.Collection
	}{{"none", nil, nil}, {"three", three, nil}, {"three-collection", nil, shared}} {
		b.Run(bc.name, func(b *testing.B) {
			tr := testutil.NewTrainer(b, quiet(volt.Config{}))
			m := &benchMetricModule{metrics: bc.metrics, collection: bc.collection}
			benchValidate(b, tr, m, batches)
		})
	}
}

// classificationBatches returns 32 batches of 64 examples with width random
// features in [0, 1) and labels of 10 classes, from the PCG seed (a, b): the
// validation sets of the per-batch benchmarks.
func classificationBatches(a, b uint64, width int) []*data.Batch {
	rng := rand.New(rand.NewPCG(a, b))
	var batches []*data.Batch
	for range 32 {
		x := make([]float32, 64*width)
		for i := range x {
			x[i] = rng.Float32()
		}
		y := make([]int32, 64)
		for i := range y {
			y[i] = int32(rng.IntN(10))
		}
		batches = append(batches, &data.Batch{Inputs: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(x, 64, width)},
			Labels: []*tensors.Tensor{tensors.FromValue(y)}, Size: 64})
	}
	return batches
}

// benchValidate validates m over batches once (tracing and compiling), then
// times one validation run per iteration and reports ns/batch.
func benchValidate(b *testing.B, tr *volt.Trainer, m volt.Module, batches []*data.Batch) {
	b.Helper()
	dm := volt.Loaders{Val: []data.Loader{&fixedLoader{batches}}}
	if _, err := tr.Validate(b.Context(), m, dm); err != nil { // trace and compile
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := tr.Validate(b.Context(), m, dm); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batches)), "ns/batch")
}
