package callback_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// Helpers of the weight-averaging and finetuning tests.

// moduleValues returns a float64 copy of every module variable of the
// trainer (volt's "/volt/…" state and GoMLX's "/#…" internals left out).
func moduleValues(t *testing.T, tr *volt.Trainer) map[string][]float64 {
	t.Helper()
	out := map[string][]float64{}
	for v := range tr.Store().IterVariables() {
		if strings.HasPrefix(v.Path(), "/volt/") || strings.HasPrefix(v.Path(), "/#") {
			continue
		}
		out[v.Path()] = variableValues(t, tr, v.Path())
	}
	return out
}

// variableValues returns a float64 copy of the floating-point variable at
// path.
func variableValues(t *testing.T, tr *volt.Trainer, path string) []float64 {
	t.Helper()
	v := tr.Store().GetVariable(path)
	if v == nil {
		t.Fatalf("no variable %s", path)
	}
	val, err := v.Value()
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	val.MustConstFlatData(func(flat any) {
		switch x := flat.(type) {
		case []float32:
			for _, f := range x {
				out = append(out, float64(f))
			}
		case []float64:
			out = append(out, x...)
		case []bfloat16.BFloat16:
			for _, f := range x {
				out = append(out, f.Float64())
			}
		default:
			t.Fatalf("variable %s has dtype %s", path, val.DType())
		}
	})
	return out
}

// setVariable writes float32 values into the variable at path.
func setVariable(t *testing.T, tr *volt.Trainer, path string, vals []float64) {
	t.Helper()
	v := tr.Store().GetVariable(path)
	if v == nil {
		t.Fatalf("no variable %s", path)
	}
	f := make([]float32, len(vals))
	for i, x := range vals {
		f[i] = float32(x)
	}
	if err := v.SetValue(tensors.FromFlatDataAndDimensions(f, v.Shape().Dimensions...)); err != nil {
		t.Fatal(err)
	}
}

// closeValues fails the test when got and want differ by more than tol
// anywhere.
func closeValues(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol {
			t.Fatalf("%s[%d] = %.9g, want %.9g (tolerance %g)", what, i, got[i], want[i], tol)
		}
	}
}

// weightLog records, during Fit, the module's weights after every
// optimizer step and at every epoch end, which variables are trainable at
// every epoch end, and the learning rates at every epoch start.
type weightLog struct {
	steps     []map[string][]float64
	epochs    []map[string][]float64
	trainable []map[string]bool
	lrs       [][]float64
	lastStep  int64
	tb        *testing.T
}

func newWeightLog(t *testing.T) *weightLog { return &weightLog{tb: t} }

func (w *weightLog) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	if t.GlobalStep() > w.lastStep {
		w.lastStep = t.GlobalStep()
		w.steps = append(w.steps, moduleValues(w.tb, t))
	}
	return nil
}

func (w *weightLog) OnTrainEpochStart(t *volt.Trainer) error {
	if len(w.lrs) <= t.CurrentEpoch() { // not again when resumed inside the epoch
		w.lrs = append(w.lrs, t.LearningRates())
	}
	return nil
}

func (w *weightLog) OnTrainEpochEnd(t *volt.Trainer) error {
	w.epochs = append(w.epochs, moduleValues(w.tb, t))
	tr := map[string]bool{}
	for v := range t.Store().IterVariables() {
		if !strings.HasPrefix(v.Path(), "/volt/") && !strings.HasPrefix(v.Path(), "/#") {
			tr[v.Path()] = v.Trainable
		}
	}
	w.trainable = append(w.trainable, tr)
	return nil
}

// twoPart is a regression model with a "/backbone" (8→4, tanh) and a
// "/head" (4→1), trained with SGD.
type twoPart struct{ lr float64 }

func (m *twoPart) forward(s *volt.Step, x *graph.Node) *graph.Node {
	h := graph.Tanh(layers.DenseWithBias(s.Scope().In("backbone"), x, 4))
	return layers.DenseWithBias(s.Scope().In("head"), h, 1)
}

func (m *twoPart) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.forward(s, b.Input(0))})
}

func (m *twoPart) ValidationStep(s *volt.Step, b volt.Batch) {
	s.Log("val_loss", loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.forward(s, b.Input(0))}))
}

func (m *twoPart) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimize(optim.SGD(max(m.lr, 0.01)))
}

// stepSaver writes a checkpoint once, when TrainBatch.Total.Processed
// reaches atBatch, at the training batch end ("batch") or at the epoch end
// ("epoch").
type stepSaver struct {
	path    string
	atBatch int64
	when    string
	saved   bool
}

func (s *stepSaver) save(t *volt.Trainer, when string) error {
	if s.saved || when != s.when || t.Progress().TrainBatch.Total.Processed != s.atBatch {
		return nil
	}
	s.saved = true
	return t.SaveCheckpoint(s.path, false)
}

func (s *stepSaver) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	return s.save(t, "batch")
}
func (s *stepSaver) OnTrainEpochEnd(t *volt.Trainer) error { return s.save(t, "epoch") }

// averagingData returns 8 shuffled training batches of 8 and one
// validation batch of 16.
func averagingData() volt.Loaders { return ckptData() }
