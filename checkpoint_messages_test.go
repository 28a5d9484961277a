package volt_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/optim"
)

// TestCheckpointMismatchMessages: a checkpoint of another model, in a new
// trainer, fails Fit and Test with an error that names the file and what
// does not match (the variables, before any optimizer or scheduler state;
// a variable's two shapes), never GoMLX's "reuse variable" panic.
func TestCheckpointMismatchMessages(t *testing.T) {
	tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 1}), &boring{}, boringData())
	path := filepath.Join(t.TempDir(), "boring.ckpt")
	if err := tr.SaveCheckpoint(path, false); err != nil {
		t.Fatal(err)
	}
	fit := func(m volt.Module) error {
		r := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 2}))
		return r.Fit(t.Context(), m, boringData(), volt.FromCheckpoint(path))
	}
	test := func(m volt.Module) error {
		r := testutil.NewTrainer(t, quiet(volt.Config{}))
		_, err := r.Test(t.Context(), m, boringData(), volt.FromCheckpoint(path))
		return err
	}
	for _, tc := range []struct {
		name    string
		run     func(volt.Module) error
		module  volt.Module
		want    []string
		notWant string
	}{
		{"fit: another model with a scheduler", fit, &otherScheduled{},
			[]string{path, `missing variables ["/other/dense/biases" "/other/dense/weights"]`, `unexpected variables ["/dense/dense/biases" "/dense/dense/weights"]`}, "scheduler"},
		{"fit: same variables, no scheduler state", fit, &boringScheduled{},
			[]string{path, "has no state for optimizer 0's scheduler"}, ""},
		{"fit: other shapes", fit, &wide{},
			[]string{path, "/dense/dense/weights", "[8, 1]", "[8, 2]"}, "reuse"},
		{"test: other shapes", test, &wide{},
			[]string{path, "/dense/dense/weights", "[8, 1]", "[8, 2]"}, "reuse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run(tc.module)
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if tc.notWant != "" && strings.Contains(err.Error(), tc.notWant) {
				t.Errorf("error %q speaks of %q", err, tc.notWant)
			}
		})
	}
}

// wide has the boring model's variable names with other shapes, in
// training and testing.
type wide struct{ boring }

func (m *wide) loss(s *volt.Step, b volt.Batch) *graph.Node {
	out := layers.DenseWithBias(s.Scope().In("dense"), b.Input(0), 2)
	return graph.ReduceAllMean(graph.Square(graph.Sub(out, b.Label(0))))
}

func (m *wide) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node { return m.loss(s, b) }

func (m *wide) TestStep(s *volt.Step, b volt.Batch) { s.Log("test_loss", m.loss(s, b)) }

// otherScheduled is another model (its layer under "other") with a step
// scheduler.
type otherScheduled struct{ boring }

func (m *otherScheduled) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	out := layers.DenseWithBias(s.Scope().In("other"), b.Input(0), 1)
	return graph.ReduceAllMean(graph.Square(graph.Sub(out, b.Label(0))))
}

func (m *otherScheduled) ConfigureOptimizers() volt.Optimizers { return scheduledSGD() }

// boringScheduled is the boring model with a step scheduler.
type boringScheduled struct{ boring }

func (m *boringScheduled) ConfigureOptimizers() volt.Optimizers { return scheduledSGD() }

func scheduledSGD() volt.Optimizers {
	sched := optim.NewStepLR(2, 0.5)
	return volt.Optimizers{{Optimizer: optim.SGD(0.05), Scheduler: sched, Interval: volt.IntervalEpoch}}
}
