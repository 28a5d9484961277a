package metrics

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

const benchBatch, benchFeatures, benchClasses = 64, 784, 10

// benchStep compiles one SGD step of a 784-10 logistic regression on a batch
// of 64; with metrics it also updates Accuracy and macro F1 (sharing their
// counts) and a 100-threshold binned AUROC. The step's only output is the
// loss: the metrics' state stays in variables, with no host transfer.
func benchStep(b *testing.B, withMetrics bool) *model.Exec {
	store := model.NewStore()
	w, err := store.CreateVariable("/model/w", tensors.FromFlatDataAndDimensions(make([]float32, benchFeatures*benchClasses), benchFeatures, benchClasses))
	if err != nil {
		b.Fatal(err)
	}
	var bound *Bound
	if withMetrics {
		mc := Multiclass(benchClasses)
		acc, err1 := NewAccuracy(mc, Micro)
		f1, err2 := NewF1(mc, Macro)
		auroc, err3 := NewAUROC(mc, Macro, Linspace(100))
		if err1 != nil || err2 != nil || err3 != nil {
			b.Fatal(err1, err2, err3)
		}
		coll, err := NewCollection(Named{"acc", acc}, Named{"f1", f1}, Named{"auroc", auroc})
		if err != nil {
			b.Fatal(err)
		}
		if bound, err = Bind(store, "/metrics/val", coll); err != nil {
			b.Fatal(err)
		}
	}
	exec, err := model.NewExec(testBackend(b), store, func(_ *model.Scope, x, y *graph.Node) *graph.Node {
		g := x.Graph()
		store.SetTraining(g, true)
		logits := graph.MatMul(x, w.NodeValue(g))
		picked := graph.Mul(graph.LogSoftmax(logits, 1), graph.OneHot(y, benchClasses, dtypes.Float32))
		loss := graph.Neg(graph.ReduceAllMean(graph.ReduceSum(picked, 1)))
		grad := graph.Gradient(loss, w.NodeValue(g))[0]
		w.SetNodeValue(graph.Sub(w.NodeValue(g), graph.MulScalar(grad, 0.1)))
		if bound != nil {
			bound.Update(graph.StopGradient(logits), y)
		}
		return loss
	})
	if err != nil {
		b.Fatal(err)
	}
	return exec
}

// benchBatchTensors returns a fixed random batch.
func benchBatchTensors() (x, y *tensors.Tensor) {
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]float32, benchBatch*benchFeatures)
	for i := range xs {
		xs[i] = rng.Float32()
	}
	ys := make([]int64, benchBatch)
	for i := range ys {
		ys[i] = rng.Int64N(benchClasses)
	}
	return tensors.FromFlatDataAndDimensions(xs, benchBatch, benchFeatures), tensors.FromFlatDataAndDimensions(ys, benchBatch)
}

// BenchmarkStep times the step without metrics and with three. loop=paired
// runs both in each iteration, so machine noise hits both alike, and reports
// each one's time per step.
func BenchmarkStep(b *testing.B) {
	x, y := benchBatchTensors()
	for _, tc := range []struct {
		name    string
		metrics bool
	}{{"metrics=none", false}, {"metrics=3", true}} {
		b.Run(tc.name, func(b *testing.B) {
			exec := benchStep(b, tc.metrics)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := exec.Call(x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("loop=paired", func(b *testing.B) {
		plain, withMetrics := benchStep(b, false), benchStep(b, true)
		var plainTime, metricsTime time.Duration
		for b.Loop() {
			start := time.Now()
			if _, err := plain.Call(x, y); err != nil {
				b.Fatal(err)
			}
			mid := time.Now()
			if _, err := withMetrics.Call(x, y); err != nil {
				b.Fatal(err)
			}
			plainTime += mid.Sub(start)
			metricsTime += time.Since(mid)
		}
		b.ReportMetric(float64(plainTime.Nanoseconds())/float64(b.N), "ns-none/step")
		b.ReportMetric(float64(metricsTime.Nanoseconds())/float64(b.N), "ns-metrics/step")
	})
}
