package callback_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/optim"
)

// heads is a model of three dense heads, "/a", "/b" and "/c", summed; its
// optimizers are given by the test.
type heads struct {
	boring
	opts volt.Optimizers
}

func (m *heads) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	var out *graph.Node
	for _, name := range []string{"a", "b", "c"} {
		h := layers.DenseWithBias(s.Scope().In("%s", name), b.Input(0), 1)
		if out == nil {
			out = h
		} else {
			out = graph.Add(out, h)
		}
	}
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{out})
}

func (m *heads) ConfigureOptimizers() volt.Optimizers { return m.opts }

func near(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Abs(x-y) <= 1e-6*math.Abs(y) })
}

func repeat(v float64, n int) []float64 { return slices.Repeat([]float64{v}, n) }

func TestLearningRateMonitor(t *testing.T) {
	three := volt.Optimizers{
		{Optimizer: optim.SGD(0.1).WithMomentum(0.9), Params: []string{"/a"}},
		{Optimizer: optim.SGD(0.2), Params: []string{"/b"}},
		{Optimizer: optim.AdamW(0.01), Params: []string{"/c"}},
	}
	tests := []struct {
		name      string
		cfg       callback.LearningRateMonitorConfig
		opts      volt.Optimizers
		wantNames []string
		want      map[string][]float64
		absent    []string
	}{
		{"epoch by default", callback.LearningRateMonitorConfig{}, volt.Optimize(optim.SGD(0.05)),
			[]string{"lr-SGD"}, map[string][]float64{"lr-SGD": repeat(0.05, 2)}, []string{"lr-SGD-momentum"}},
		{"step", callback.LearningRateMonitorConfig{LoggingInterval: "step"}, volt.Optimize(optim.Adam(0.003)),
			[]string{"lr-Adam"}, map[string][]float64{"lr-Adam": repeat(0.003, 8)}, nil},
		{"several optimizers, momentum and weight decay", callback.LearningRateMonitorConfig{LogMomentum: true, LogWeightDecay: true}, three,
			[]string{"lr-SGD", "lr-SGD-1", "lr-AdamW"}, map[string][]float64{
				"lr-SGD": repeat(0.1, 2), "lr-SGD-1": repeat(0.2, 2), "lr-AdamW": repeat(0.01, 2),
				"lr-SGD-momentum": repeat(0.9, 2), "lr-SGD-1-momentum": repeat(0, 2), "lr-AdamW-momentum": repeat(0.9, 2),
				"lr-SGD-weight_decay": repeat(0, 2), "lr-AdamW-weight_decay": repeat(0.01, 2),
			}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := callback.NewLearningRateMonitor(tc.cfg)
			log := &memLogger{}
			if _, err := fit(t, logged(volt.Config{MaxEpochs: 2, LogEveryNSteps: 1}, log), &heads{opts: tc.opts}, trainOnly(), m); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(m.Names(), tc.wantNames) {
				t.Errorf("names %v, want %v", m.Names(), tc.wantNames)
			}
			for name, want := range tc.want {
				if got := log.series(name); !near(got, want) {
					t.Errorf("%s = %v, want %v", name, got, want)
				}
			}
			for _, name := range tc.absent {
				if got := log.series(name); len(got) > 0 {
					t.Errorf("%s logged: %v", name, got)
				}
			}
		})
	}
}

func TestLearningRateMonitorConfigErrors(t *testing.T) {
	err := callback.NewLearningRateMonitor(callback.LearningRateMonitorConfig{LoggingInterval: "batch"}).Validate()
	if err == nil || !strings.Contains(err.Error(), `LearningRateMonitorConfig.LoggingInterval: unknown "batch"; valid: "step", "epoch"`) {
		t.Errorf("error = %v", err)
	}
}
