package torchinit_test

import (
	"log/slog"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
	"github.com/voltml/volt/torchinit"
)

// torchMLP builds its layers with the one-line switch, in a forward shared
// by the training and validation steps.
type torchMLP struct{}

func (torchMLP) forward(scope *model.Scope, x *graph.Node) *graph.Node {
	defer torchinit.Apply(scope)
	x = layers.DenseWithBias(scope.In("hidden"), x, 64)
	return layers.DenseWithBias(scope.In("out"), x, 1)
}

func (m torchMLP) mse(s *volt.Step, b volt.Batch) *graph.Node {
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.forward(s.Scope(), b.Input(0))})
}

func (m torchMLP) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node { return m.mse(s, b) }
func (m torchMLP) ValidationStep(s *volt.Step, b volt.Batch)           { s.Log("val_loss", m.mse(s, b)) }
func (torchMLP) ConfigureOptimizers() volt.Optimizers                  { return volt.Optimize(optim.SGD(1e-30)) }

// TestApplyInAFit: in a real Fit (sanity check first, then training) the
// deferred Apply gives the trainer's variables PyTorch's distributions: the
// biases are no longer GoMLX's zeros and every value lies within its
// layer's 1/√fan_in.
func TestApplyInAFit(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	examples := make(data.Slice, 32)
	for i := range examples {
		x := make([]float32, 8)
		for j := range x {
			x[j] = float32(r.NormFloat64())
		}
		examples[i] = data.Example{Inputs: []data.Field{{Value: x}}, Labels: []data.Field{{Value: []float32{x[0]}}}}
	}
	tr, err := volt.NewTrainer(volt.Config{MaxSteps: 1, DisableLoggers: true, DisableCheckpointing: true, DisableModelSummary: true,
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	loaders := volt.Loaders{Train: &data.DataLoader{Dataset: examples, BatchSize: 16},
		Val: []data.Loader{&data.DataLoader{Dataset: examples, BatchSize: 16}}}
	if err := tr.Fit(t.Context(), torchMLP{}, loaders); err != nil {
		t.Fatal(err)
	}
	bounds := map[string]float64{
		"/hidden/dense/weights": 1 / math.Sqrt(8), "/hidden/dense/biases": 1 / math.Sqrt(8),
		"/out/dense/weights": 1 / math.Sqrt(64), "/out/dense/biases": 1 / math.Sqrt(64),
	}
	for path, bound := range bounds {
		v := tr.Store().GetVariable(path)
		if v == nil {
			t.Fatalf("no variable %s", path)
		}
		value, err := v.Value()
		if err != nil {
			t.Fatal(err)
		}
		var maxAbs float64
		for _, x := range tensors.MustCopyFlatData[float32](value) {
			maxAbs = max(maxAbs, math.Abs(float64(x)))
		}
		if maxAbs < 1e-3*bound || maxAbs > bound { // GoMLX would leave the biases at 0
			t.Errorf("%s: max |x| %v, want in (0, %v]", path, maxAbs, bound)
		}
	}
}
