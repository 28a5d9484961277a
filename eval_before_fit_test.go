package volt_test

import (
	"fmt"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model/initializer"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// This file checks that an evaluation run before Fit leaves the later ones
// as they are on a trainer that only fitted (evaluation programs retrace
// once the weights they embedded change).

// zeroLine is exLine with its dense layer initialised with zeros: its
// initialisation leaves the store's random state as it was.
type zeroLine struct{ exLine }

func (zeroLine) mse(s *volt.Step, b volt.Batch) *graph.Node {
	pred := layers.DenseWithBias(s.Scope().In("dense").WithInitializer(initializer.Zero), b.Input(0), 1)
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
}

func (m zeroLine) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.mse(s, b)
	s.Log("train_loss", l)
	return l
}

func (m zeroLine) ValidationStep(s *volt.Step, b volt.Batch) { s.Log("val_loss", m.mse(s, b)) }

func (m zeroLine) TestStep(s *volt.Step, b volt.Batch) { s.Log("test_loss", m.mse(s, b)) }

func (zeroLine) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return layers.DenseWithBias(s.Scope().In("dense").WithInitializer(initializer.Zero), b.Input(0), 1)
}

// TestEvaluationBeforeFitLeavesLaterEvaluationsAsAFreshTrainers: with
// weights an initializer creates in the first evaluation's trace and
// evaluation loaders whose last batch is smaller (a second graph, traced
// once the weights have values), a Validate, Test or Predict before Fit
// leaves the later Validate and Test reporting exactly what a trainer that
// only fitted reports.
func TestEvaluationBeforeFitLeavesLaterEvaluationsAsAFreshTrainers(t *testing.T) {
	for _, c := range []struct {
		name   string
		module volt.Module
	}{
		{"zero-initialised dense layer", zeroLine{}},
		{"randomly initialised dense layer", exLine{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := evaluationsAfterFit(t, c.module, "")
			for _, before := range []string{"validate", "test", "predict"} {
				if got := evaluationsAfterFit(t, c.module, before); got != want {
					t.Errorf("%s → Fit → Validate → Test reports %s; Fit → Validate → Test %s", before, got, want)
				}
			}
		})
	}
}

// evaluationsAfterFit runs the entry point before (none when "") then Fit,
// Validate and Test on one trainer, and returns what the last two report.
func evaluationsAfterFit(t *testing.T, m volt.Module, before string) string {
	t.Helper()
	dm := exData()
	eval := &data.DataLoader{Dataset: exExamples(20, 2), BatchSize: 8} // 8, 8, 4
	dm.Val, dm.Test, dm.Predict = []data.Loader{eval}, []data.Loader{eval}, []data.Loader{eval}
	tr := testutil.NewTrainer(t, exQuiet(volt.Config{MaxEpochs: 3, Seed: volt.Ptr(uint64(7))}))
	var err error
	switch before {
	case "validate":
		_, err = tr.Validate(t.Context(), m, dm)
	case "test":
		_, err = tr.Test(t.Context(), m, dm)
	case "predict":
		_, err = tr.Predict(t.Context(), m, dm)
	}
	if err == nil {
		err = tr.Fit(t.Context(), m, dm)
	}
	var val, test []map[string]float64
	if err == nil {
		val, err = tr.Validate(t.Context(), m, dm)
	}
	if err == nil {
		test, err = tr.Test(t.Context(), m, dm)
	}
	if err != nil {
		t.Fatalf("%s → Fit → Validate → Test: %v", before, err)
	}
	return fmt.Sprint(val, test)
}
