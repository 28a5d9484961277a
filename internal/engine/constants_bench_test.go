package engine

import (
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
)

// mlpEval is the MNIST MLP's evaluation graph (784-256-256-10).
func mlpEval(scope *model.Scope, x *graph.Node) *graph.Node {
	h := activation.Relu(layers.DenseWithBias(scope.In("h1"), x, 256))
	h = activation.Relu(layers.DenseWithBias(scope.In("h2"), h, 256))
	return layers.DenseWithBias(scope.In("out"), h, 10)
}

func mlpInput(batch int) *tensors.Tensor {
	flat := make([]float32, batch*784)
	for i := range flat {
		flat[i] = float32(i%255) / 255
	}
	return tensors.FromFlatDataAndDimensions(flat, batch, 784)
}

// BenchmarkEvalVariables measures the choice documented in doc.go: an
// evaluation graph that reads the variables as parameters (volt's backend
// wrapper) against one that embeds them as constants (the Go backend's
// preference, which packs weight panels once), and the cost of the trace
// and compile that constants need whenever the weights change.
func BenchmarkEvalVariables(b *testing.B) {
	inner, err := compute.NewWithConfig("go")
	if err != nil {
		b.Fatal(err)
	}
	asParams := func(scope *model.Scope, x *graph.Node) *graph.Node {
		scope.Store().SetTraining(x.Graph(), true) // training graphs read variables as parameters
		return mlpEval(scope, x)
	}
	for _, batch := range []int{64, 256} {
		for _, c := range []struct {
			name string
			fn   func(*model.Scope, *graph.Node) *graph.Node
		}{{"params", asParams}, {"constants", mlpEval}} {
			x := mlpInput(batch) // a tensor lives on one backend instance
			store := model.NewStore()
			exec, err := model.NewExec(inner, store, c.fn)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := exec.Exec(x); err != nil { // initialises the variables
				b.Fatal(err)
			}
			// A second Exec for the constants case: its graph is traced after
			// the variables have values, so they become constants.
			exec, _ = model.NewExec(inner, store, c.fn)
			b.Run(c.name+"/batch="+itoa(batch)+"/step", func(b *testing.B) {
				for b.Loop() {
					if _, err := exec.Exec(x); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(c.name+"/batch="+itoa(batch)+"/compile+step", func(b *testing.B) {
				for b.Loop() {
					e, _ := model.NewExec(inner, store, c.fn)
					if _, err := e.Exec(x); err != nil {
						b.Fatal(err)
					}
					e.Finalize()
				}
			})
		}
	}
	_ = dtypes.Float32
}

func itoa(n int) string {
	return string(rune('0'+n/100%10)) + string(rune('0'+n/10%10)) + string(rune('0'+n%10))
}

// BenchmarkTrainingStepCompile measures what a second input shape (the
// last, smaller batch of an epoch) costs: tracing and compiling the MNIST
// MLP's training step (forward, gradients, SGD update) and running it once,
// against running the compiled step.
func BenchmarkTrainingStepCompile(b *testing.B) {
	backend, err := Backend("go")
	if err != nil {
		b.Fatal(err)
	}
	step := func(scope *model.Scope, x *graph.Node) *graph.Node {
		g := x.Graph()
		scope.SetTraining(g, true)
		loss := graph.ReduceAllMean(graph.Square(mlpEval(scope, x)))
		var vars []*model.Variable
		var values []*graph.Node
		for v := range scope.Store().IterVariables() {
			vars = append(vars, v)
			values = append(values, v.NodeValue(g))
		}
		for i, grad := range graph.Gradient(loss, values...) {
			vars[i].SetNodeValue(graph.Sub(values[i], graph.MulScalar(grad, 0.01)))
		}
		return loss
	}
	x := mlpInput(64)
	store := model.NewStore()
	exec, err := model.NewExec(backend, store, step)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := exec.Exec(x); err != nil {
		b.Fatal(err)
	}
	b.Run("step", func(b *testing.B) {
		for b.Loop() {
			if _, err := exec.Exec(x); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("trace+compile+step", func(b *testing.B) {
		for b.Loop() {
			e, _ := model.NewExec(backend, store, step)
			if _, err := e.Exec(x); err != nil {
				b.Fatal(err)
			}
			e.Finalize()
		}
	})
}
