package callback_test

import (
	"bytes"
	"log/slog"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/logger"
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

// trainOnly returns boringData without validation loaders.
func trainOnly() volt.Loaders {
	l := boringData()
	l.Val = nil
	return l
}

// quiet returns a config that writes no logs and no files.
func quiet(cfg volt.Config) volt.Config {
	cfg.DisableLoggers = true
	cfg.Log = slog.New(slog.DiscardHandler)
	return cfg
}

// capture returns a config like quiet but whose volt messages go to buf.
func capture(cfg volt.Config, buf *bytes.Buffer) volt.Config {
	cfg = quiet(cfg)
	cfg.Log = slog.New(slog.NewTextHandler(buf, nil))
	return cfg
}

// fit trains m on dm with cfg and the callbacks, failing the test on a
// configuration error; it returns the trainer and Fit's error.
func fit(t *testing.T, cfg volt.Config, m volt.Module, dm volt.DataModule, cbs ...volt.Callback) (*volt.Trainer, error) {
	t.Helper()
	cfg.Callbacks = append(cfg.Callbacks, cbs...)
	tr, err := volt.NewTrainer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr, tr.Fit(t.Context(), m, dm)
}

// memLogger is a logger that keeps every row in memory.
type memLogger struct {
	rows  []map[string]float64
	steps []int64
}

func (l *memLogger) LogMetrics(m map[string]float64, step int64) error {
	l.rows = append(l.rows, maps.Clone(m))
	l.steps = append(l.steps, step)
	return nil
}
func (l *memLogger) LogHyperparams(map[string]any) error { return nil }
func (l *memLogger) Save() error                         { return nil }
func (l *memLogger) Finalize(string) error               { return nil }

// series returns the values of name in logged order.
func (l *memLogger) series(name string) []float64 {
	var out []float64
	for _, r := range l.rows {
		if v, ok := r[name]; ok {
			out = append(out, v)
		}
	}
	return out
}

// fakeClock is a clock that moves only when told.
type fakeClock struct{ now time.Time }

func newFakeClock() *fakeClock               { return &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }
func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) advance(d time.Duration) { c.now = c.now.Add(d) }

// ticker advances a fake clock by Step at each training batch end; list it
// before the callback that reads the clock.
type ticker struct {
	clock *fakeClock
	step  time.Duration
}

func (k ticker) OnTrainBatchEnd(*volt.Trainer, *volt.StepOutput, *data.Batch, int) error {
	k.clock.advance(k.step)
	return nil
}

// logged returns a quiet config whose only logger is l.
func logged(cfg volt.Config, l *memLogger) volt.Config {
	cfg = quiet(cfg)
	cfg.DisableLoggers = false
	cfg.Loggers = []logger.Logger{l}
	return cfg
}
