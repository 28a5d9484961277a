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

// benchMetrics returns the metrics a benchmarked step updates: "none", "3"
// (Accuracy and macro F1, sharing their counts, and a 100-threshold binned
// AUROC), "acc+f1" or "auroc100".
func benchMetrics(b *testing.B, which string) []Named {
	mc := Multiclass(benchClasses)
	acc, err1 := NewAccuracy(mc, Micro)
	f1, err2 := NewF1(mc, Macro)
	auroc, err3 := NewAUROC(mc, Macro, Linspace(100))
	if err1 != nil || err2 != nil || err3 != nil {
		b.Fatal(err1, err2, err3)
	}
	switch which {
	case "3":
		return []Named{{"acc", acc}, {"f1", f1}, {"auroc", auroc}}
	case "acc+f1":
		return []Named{{"acc", acc}, {"f1", f1}}
	case "auroc100":
		return []Named{{"auroc", auroc}}
	}
	return nil
}

// benchStep compiles one SGD step of a 784-10 logistic regression on a batch
// of 64 that also updates the metrics named by which (see benchMetrics). The
// step's only output is the loss: the metrics' state stays in variables, with
// no host transfer.
func benchStep(b *testing.B, which string) *model.Exec {
	store := model.NewStore()
	w, err := store.CreateVariable("/model/w", tensors.FromFlatDataAndDimensions(make([]float32, benchFeatures*benchClasses), benchFeatures, benchClasses))
	if err != nil {
		b.Fatal(err)
	}
	var bound *Bound
	if named := benchMetrics(b, which); named != nil {
		coll, err := NewCollection(named...)
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

// BenchmarkStep times the step without metrics, with three, and with each
// part of the three. loop=paired runs every variant in each iteration, so
// machine noise hits them alike, and reports each one's time per step.
func BenchmarkStep(b *testing.B) {
	x, y := benchBatchTensors()
	for _, which := range []string{"none", "3", "acc+f1", "auroc100"} {
		b.Run("metrics="+which, func(b *testing.B) {
			exec := benchStep(b, which)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := exec.Call(x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("loop=paired", func(b *testing.B) {
		variants := []string{"none", "acc+f1", "auroc100", "3"}
		execs := make([]*model.Exec, len(variants))
		for i, which := range variants {
			execs[i] = benchStep(b, which)
		}
		spent := make([]time.Duration, len(variants))
		for b.Loop() {
			for i, exec := range execs {
				start := time.Now()
				if _, err := exec.Call(x, y); err != nil {
					b.Fatal(err)
				}
				spent[i] += time.Since(start)
			}
		}
		for i, which := range variants {
			b.ReportMetric(float64(spent[i].Nanoseconds())/float64(b.N), "ns-"+which+"/step")
		}
	})
}
