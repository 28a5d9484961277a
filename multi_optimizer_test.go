package volt_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/optim"
)

// twoHeads has two parts, /a and /b, each owned by its own optimizer.
type twoHeads struct {
	freqs  [2]int
	manual bool
	traced []int // optimizer index of each trace
}

func (m *twoHeads) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	m.traced = append(m.traced, s.OptimizerIdx())
	x := b.Input(0)
	pred := graph.Add(layers.DenseWithBias(s.Scope().In("a"), x, 1), layers.DenseWithBias(s.Scope().In("b"), x, 1))
	l := loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
	if m.manual {
		for _, opt := range s.Optimizers() {
			opt.Step(l)
		}
	}
	return l
}

func (m *twoHeads) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimizers{
		{Optimizer: optim.SGD(0.01), Params: []string{"/a"}, Frequency: m.freqs[0]},
		{Optimizer: optim.SGD(0.01), Params: []string{"/b"}, Frequency: m.freqs[1]},
	}
}

func (m *twoHeads) AutomaticOptimization() bool { return !m.manual }

// changes records, per batch, which of /a and /b changed.
type changes struct {
	before map[string][]byte
	log    []string
	t      *testing.T
}

func (c *changes) snapshot(tr *volt.Trainer) map[string][]byte { return weights(c.t, tr) }

func (c *changes) OnTrainBatchStart(tr *volt.Trainer, _ *data.Batch, _ int) error {
	c.before = c.snapshot(tr)
	return nil
}

func (c *changes) OnTrainBatchEnd(tr *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, i int) error {
	after := c.snapshot(tr)
	changed := ""
	for _, part := range []string{"a", "b"} {
		path := "/" + part + "/dense/weights"
		if c.before[path] != nil && string(c.before[path]) != string(after[path]) {
			changed += part
		}
	}
	c.log = append(c.log, fmt.Sprintf("%d:%s", i, changed))
	return nil
}

func TestSeveralOptimizers(t *testing.T) {
	tests := []struct {
		name      string
		m         *twoHeads
		wantLog   []string
		wantSteps int64
	}{
		// Without frequencies both optimizers run on every batch; one global step per batch.
		{"every batch", &twoHeads{}, []string{"1:ab", "2:ab", "3:ab"}, 4},
		// Frequencies 2 and 1: a, a, b, a, a, b, …
		{"frequencies", &twoHeads{freqs: [2]int{2, 1}}, []string{"1:a", "2:b", "3:a"}, 4},
		// Manual: the module steps both; each Step counts.
		{"manual", &twoHeads{manual: true}, []string{"1:ab", "2:ab", "3:ab"}, 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch := &changes{t: t}
			tr := fitBoring(t, volt.Config{MaxEpochs: 1, Callbacks: []volt.Callback{ch}}, loaderOf(regression(16, 1), 4), tc.m)
			// Batch 0 creates the variables, so changes are visible from batch 1 on.
			if !slices.Equal(ch.log[1:], tc.wantLog) {
				t.Errorf("updated per batch %v, want %v", ch.log[1:], tc.wantLog)
			}
			if tr.GlobalStep() != tc.wantSteps {
				t.Errorf("GlobalStep %d, want %d", tr.GlobalStep(), tc.wantSteps)
			}
		})
	}
}

// manualBoring trains the boring model by hand with its single optimizer.
type manualBoring struct{ boring }

func (m *manualBoring) AutomaticOptimization() bool { return false }

func (m *manualBoring) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.boring.TrainingStep(s, b)
	s.Optimizers()[0].Step(l)
	return l
}

func TestManualEqualsAutomatic(t *testing.T) {
	auto := fitBoring(t, volt.Config{MaxEpochs: 2}, boringData(), &boring{})
	manual := fitBoring(t, volt.Config{MaxEpochs: 2}, boringData(), &manualBoring{})
	if !equalWeights(weights(t, auto), weights(t, manual)) {
		t.Error("a manual step with one optimizer differs from automatic optimization")
	}
	if auto.GlobalStep() != manual.GlobalStep() {
		t.Errorf("global steps %d vs %d", auto.GlobalStep(), manual.GlobalStep())
	}
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1, AccumulateGradBatches: 2}))
	if err := tr.Fit(t.Context(), &manualBoring{}, boringData()); err == nil || !contains(err.Error(), "AccumulateGradBatches=2 cannot be used with manual optimization") {
		t.Errorf("accumulation with manual optimization: %v", err)
	}
}
