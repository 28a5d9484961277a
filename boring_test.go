package volt_test

import (
	"log/slog"
	"math/rand/v2"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// boring is the test model: one dense layer regressing y = x·w on 8 features.
type boring struct {
	lr float64
}

func (m *boring) forward(s *volt.Step, x *graph.Node) *graph.Node {
	return layers.DenseWithBias(s.Scope().In("dense"), x, 1)
}

func (m *boring) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.forward(s, b.Input(0))})
	s.Log("train_loss", l, volt.ProgBar)
	return l
}

func (m *boring) ValidationStep(s *volt.Step, b volt.Batch) {
	l := loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.forward(s, b.Input(0))})
	s.Log("val_loss", l)
}

func (m *boring) TestStep(s *volt.Step, b volt.Batch) {
	l := loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.forward(s, b.Input(0))})
	s.Log("test_loss", l)
}

func (m *boring) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.forward(s, b.Input(0))
}

func (m *boring) ConfigureOptimizers() volt.Optimizers {
	lr := m.lr
	if lr == 0 {
		lr = 0.05
	}
	return volt.Optimize(optim.SGD(lr))
}

// regression returns n examples of y = x·w + 0.5 with 8 features.
func regression(n int, seed uint64) data.Slice {
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

// boringData returns loaders over 64 training and 16 validation examples
// in batches of 16 (4 and 1 batches).
func boringData() volt.Loaders {
	train := &data.DataLoader{Dataset: regression(64, 1), BatchSize: 16, Shuffle: true}
	val := &data.DataLoader{Dataset: regression(16, 2), BatchSize: 16}
	test := &data.DataLoader{Dataset: regression(16, 3), BatchSize: 8}
	return volt.Loaders{Train: train, Val: []data.Loader{val}, Test: []data.Loader{test}, Predict: []data.Loader{test}}
}

// quiet returns a config that writes no logs and no files.
func quiet(cfg volt.Config) volt.Config {
	cfg.DisableLoggers = true
	cfg.DisableModelSummary = true
	cfg.Log = slog.New(slog.DiscardHandler)
	return cfg
}
