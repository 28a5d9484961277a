package volt_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// exRunningSum learns h_t = a·h_{t-1} + w·x_t to predict the running sum
// of a sequence (a = w = 1 is exact), trained with truncated
// back-propagation through time.
type exRunningSum struct{}

// TBPTTTrainingStep implements volt.TBPTTStepper: one time split, starting
// from the previous split's hidden state (nil for the first).
func (exRunningSum) TBPTTTrainingStep(s *volt.Step, b volt.Batch, hiddens []*graph.Node) (*graph.Node, []*graph.Node) {
	x, g := b.Input(0), b.Input(0).Graph()
	batch, steps := x.Shape().Dimensions[0], x.Shape().Dimensions[1]
	a := s.Scope().VariableWithShape("a", shapes.Make(x.DType(), 1, 1)).NodeValue(g)
	w := s.Scope().VariableWithShape("w", shapes.Make(x.DType(), 1, 1)).NodeValue(g)
	h := graph.Zeros(g, shapes.Make(x.DType(), batch, 1))
	if hiddens != nil {
		h = hiddens[0]
	}
	var outs []*graph.Node
	for t := range steps {
		xt := graph.Reshape(graph.Slice(x, graph.AxisRange(), graph.AxisElem(t), graph.AxisRange()), batch, 1)
		h = graph.Add(graph.Mul(h, a), graph.Mul(xt, w))
		outs = append(outs, h)
	}
	loss := graph.ReduceAllMean(graph.Square(graph.Sub(graph.Stack(outs, 1), b.Label(0))))
	s.Log("train_loss", loss)
	return loss, []*graph.Node{h}
}

// TrainingStep implements volt.Module (used without TruncatedBPTTSteps).
func (m exRunningSum) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	loss, _ := m.TBPTTTrainingStep(s, b, nil)
	return loss
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (exRunningSum) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.SGD(0.02)) }

// exSequences returns n sequences of 8 random steps labelled with their
// running sums, shaped [8, 1].
func exSequences(n int) data.Slice {
	r := rand.New(rand.NewPCG(5, 7))
	out := make(data.Slice, n)
	for i := range out {
		x, sum := make([]float32, 8), make([]float32, 8)
		var acc float32
		for t := range x {
			x[t] = float32(r.NormFloat64())
			acc += x[t]
			sum[t] = acc
		}
		out[i] = data.Example{
			Inputs: []data.Field{{Value: x, Shape: []int{8, 1}}},
			Labels: []data.Field{{Value: sum, Shape: []int{8, 1}}},
		}
	}
	return out
}

// exBatchCounter counts the training batch hooks.
type exBatchCounter struct{ batches *int }

func (c exBatchCounter) OnTrainBatchEnd(*volt.Trainer, *volt.StepOutput, *data.Batch, int) error {
	*c.batches++
	return nil
}

// Config.TruncatedBPTTSteps splits each batch along its time axis (axis 1)
// into chunks; each chunk is one optimization step, and the hidden state
// the step returns is carried to the next chunk without gradients flowing
// back across it.
func ExampleTBPTTStepper() {
	batches := 0
	trainer, err := volt.NewTrainer(exQuiet(volt.Config{
		MaxEpochs:          30,
		TruncatedBPTTSteps: 4,
		Callbacks:          []volt.Callback{exBatchCounter{&batches}},
	}))
	if err != nil {
		panic(err)
	}
	dm := volt.Loaders{Train: &data.DataLoader{Dataset: exSequences(32), BatchSize: 8}}
	if err := trainer.Fit(context.Background(), exRunningSum{}, dm); err != nil {
		panic(err)
	}
	fmt.Println("batches:", batches, "optimization steps:", trainer.GlobalStep())
	for v := range trainer.Store().IterVariables() {
		if v.Name() == "a" || v.Name() == "w" {
			value, err := v.Value()
			if err != nil {
				panic(err)
			}
			fmt.Printf("%s=%.2f\n", v.Name(), value.Value().([][]float32)[0][0])
		}
	}
	fmt.Printf("train_loss=%.3f\n", trainer.CallbackMetrics()["train_loss"])
	// Output:
	// batches: 120 optimization steps: 240
	// a=1.00
	// w=1.00
	// train_loss=0.000
}
