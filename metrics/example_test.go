package metrics_test

import (
	"fmt"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/metrics"
)

// Example runs an epoch of validation metrics the way the engine will: the
// state is variables updated inside the compiled step, the values come from
// the accumulated state at the end.
func Example() {
	task := metrics.Multiclass(3)
	f1, _ := metrics.NewF1(task, metrics.Macro)
	acc, _ := metrics.NewAccuracy(task, metrics.Micro) // shares F1's counts
	auroc, _ := metrics.NewAUROC(task, metrics.Macro, metrics.Linspace(5))
	coll, err := metrics.NewCollection(
		metrics.Named{Name: "val_f1", Metric: f1},
		metrics.Named{Name: "val_acc", Metric: acc},
		metrics.Named{Name: "val_auroc", Metric: auroc},
	)
	if err != nil {
		panic(err)
	}
	backend, err := compute.NewWithConfig("go")
	if err != nil {
		panic(err)
	}
	store := model.NewStore()
	bound, err := metrics.Bind(store, "/metrics/val", coll)
	if err != nil {
		panic(err)
	}
	step, err := model.NewExec(backend, store, func(_ *model.Scope, logits, labels *graph.Node) *graph.Node {
		store.SetTraining(logits.Graph(), true) // the state variables must not be embedded as constants
		bound.Update(logits, labels)            // no ReduceCat state here: nothing to copy to the host
		return graph.ReduceAllMean(logits)      // stands for the step's loss
	})
	if err != nil {
		panic(err)
	}
	batches := []struct {
		logits [][]float32
		labels []int64
	}{
		{[][]float32{{2, 0, 0}, {0, 2, 0}, {0, 0, 2}}, []int64{0, 1, 1}},
		{[][]float32{{1, 0, 0}, {1, 0, 3}}, []int64{0, 2}},
	}
	for _, b := range batches {
		if _, err := step.Call(tensors.FromValue(b.logits), tensors.FromValue(b.labels)); err != nil {
			panic(err)
		}
	}
	state, err := bound.State()
	if err != nil {
		panic(err)
	}
	values, err := coll.Compute(state.Tensors())
	if err != nil {
		panic(err)
	}
	for _, name := range coll.Names() {
		v, _ := values[name].Scalar()
		fmt.Printf("%s=%.4f\n", name, v)
	}
	fmt.Println("states:", len(coll.States()))
	// The same batches in torchmetrics 1.2.1 give F1 0.7778, accuracy 0.8 and AUROC 0.875.

	// Output:
	// val_f1=0.7778
	// val_acc=0.8000
	// val_auroc=0.8750
	// states: 5
}
