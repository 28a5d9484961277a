package volt_test

import (
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
)

// dropping is the boring model with a dropout layer whose dropped fraction
// it logs in every stage.
type dropping struct{ boring }

func droppedFraction(s *volt.Step, b volt.Batch) *graph.Node {
	ones := graph.OnesLike(b.Input(0))
	kept := layers.DropoutStatic(s.Scope().In("dropout"), ones, 0.5)
	return graph.ReduceAllMean(graph.ConvertDType(graph.Equal(kept, graph.ZerosLike(kept)), dtypes.Float32))
}

func (m *dropping) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	s.Log("train_dropped", droppedFraction(s, b), volt.OnEpoch(true))
	return m.boring.TrainingStep(s, b)
}

func (m *dropping) ValidationStep(s *volt.Step, b volt.Batch) {
	s.Log("val_dropped", droppedFraction(s, b))
}

func (m *dropping) TestStep(s *volt.Step, b volt.Batch) {
	s.Log("test_dropped", droppedFraction(s, b))
}

// TestDropoutActsOnlyInTraining: training graphs are marked as training
// (GoMLX's dropout and batch norm read the mark), evaluation graphs are not.
func TestDropoutActsOnlyInTraining(t *testing.T) {
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 2}))
	m := &dropping{}
	if err := tr.Fit(t.Context(), m, boringData()); err != nil {
		t.Fatal(err)
	}
	cm := tr.CallbackMetrics()
	if got := cm["train_dropped"]; got < 0.4 || got > 0.6 {
		t.Errorf("training dropped %.3f of its inputs, want about 0.5 (metrics %v)", got, cm)
	}
	if got, ok := cm["val_dropped"]; !ok || got != 0 {
		t.Errorf("validation dropped %v (logged %v), want 0", got, ok)
	}
	res, err := tr.Test(t.Context(), m, boringData())
	if err != nil {
		t.Fatal(err)
	}
	if got := res[0]["test_dropped"]; got != 0 {
		t.Errorf("test dropped %v, want 0", got)
	}
}
