package metrics

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// BenchmarkStep times one compiled SGD step of a 784-10 logistic regression
// on a batch of 64, logging no metric or three (Accuracy and macro F1,
// sharing their counts, and a 100-threshold binned AUROC): the metrics'
// cost per step, with no host transfer for them (the step's only output is
// the loss).
func BenchmarkStep(b *testing.B) {
	const batch, features, classes = 64, 784, 10
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]float32, batch*features)
	for i := range xs {
		xs[i] = rng.Float32()
	}
	ys := make([]int64, batch)
	for i := range ys {
		ys[i] = rng.Int64N(classes)
	}
	x := tensors.FromFlatDataAndDimensions(xs, batch, features)
	y := tensors.FromFlatDataAndDimensions(ys, batch)
	for _, withMetrics := range []bool{false, true} {
		name := "metrics=none"
		if withMetrics {
			name = "metrics=3"
		}
		b.Run(name, func(b *testing.B) {
			store := model.NewStore()
			w, err := store.CreateVariable("/model/w", tensors.FromFlatDataAndDimensions(make([]float32, features*classes), features, classes))
			if err != nil {
				b.Fatal(err)
			}
			var bound *Bound
			if withMetrics {
				mc := Multiclass(classes)
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
				picked := graph.Mul(graph.LogSoftmax(logits, 1), graph.OneHot(y, classes, dtypes.Float32))
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
			b.ReportAllocs()
			for b.Loop() {
				if _, err := exec.Call(x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
