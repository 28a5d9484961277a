// Package testutil holds the small model and data that volt's tests share
// (Lightning's BoringModel): one dense layer regressing a linear function of
// eight features.
package testutil

import (
	"math/rand/v2"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// Boring is the test model: one dense layer regressing y = x·w + 0.5, with
// every step and SGD at LR (0.05 when 0).
type Boring struct {
	LR float64
}

// Forward is the model: one dense layer.
func (m *Boring) Forward(s *volt.Step, x *graph.Node) *graph.Node {
	return layers.DenseWithBias(s.Scope().In("dense"), x, 1)
}

func (m *Boring) mse(s *volt.Step, b volt.Batch) *graph.Node {
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.Forward(s, b.Input(0))})
}

// TrainingStep implements volt.Module.
func (m *Boring) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.mse(s, b)
	s.Log("train_loss", l, volt.ProgBar)
	return l
}

// ValidationStep implements volt.ValidationStepper.
func (m *Boring) ValidationStep(s *volt.Step, b volt.Batch) { s.Log("val_loss", m.mse(s, b)) }

// TestStep implements volt.TestStepper.
func (m *Boring) TestStep(s *volt.Step, b volt.Batch) { s.Log("test_loss", m.mse(s, b)) }

// PredictStep implements volt.PredictStepper.
func (m *Boring) PredictStep(s *volt.Step, b volt.Batch) *graph.Node { return m.Forward(s, b.Input(0)) }

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *Boring) ConfigureOptimizers() volt.Optimizers {
	lr := m.LR
	if lr == 0 {
		lr = 0.05
	}
	return volt.Optimize(optim.SGD(lr))
}

// Regression returns n examples of y = x·w + 0.5 with 8 features drawn from
// a generator seeded with seed.
func Regression(n int, seed uint64) data.Slice {
	r := rand.New(rand.NewPCG(seed, 7))
	w := []float32{1, -2, 0.5, 3, 0, -1, 2, 0.25}
	out := make(data.Slice, n)
	for i := range out {
		x := make([]float32, len(w))
		y := float32(0.5)
		for j := range x {
			x[j] = float32(r.NormFloat64())
			y += x[j] * w[j]
		}
		out[i] = data.Example{Inputs: []data.Field{{Value: x}}, Labels: []data.Field{{Value: []float32{y}}}}
	}
	return out
}

// BoringData returns loaders over 64 shuffled training examples in batches
// of 16 (4 batches), 16 validation examples (1 batch) and 16 test and
// predict examples in batches of 8.
func BoringData() volt.Loaders {
	train := &data.DataLoader{Dataset: Regression(64, 1), BatchSize: 16, Shuffle: true}
	val := &data.DataLoader{Dataset: Regression(16, 2), BatchSize: 16}
	test := &data.DataLoader{Dataset: Regression(16, 3), BatchSize: 8}
	return volt.Loaders{Train: train, Val: []data.Loader{val}, Test: []data.Loader{test}, Predict: []data.Loader{test}}
}

// Weights returns a copy of the bytes of every variable that has a value,
// keyed by path: what bitwise comparisons of two runs compare.
func Weights(store *model.Store) (map[string][]byte, error) {
	out := map[string][]byte{}
	for v := range store.IterVariables() {
		if !v.HasValue() {
			continue
		}
		val, err := v.Value()
		if err != nil {
			return nil, err
		}
		if err := val.ConstBytes(func(b []byte) { out[v.Path()] = append([]byte(nil), b...) }); err != nil {
			return nil, err
		}
	}
	return out, nil
}
