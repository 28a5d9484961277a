package tuner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/optim"
)

// linearData is volt's testdata/lightning/data.json: trace_hooks.py's rows
// and the initial weights of its Linear(4, 1) (gen_lr_find.py uses the same).
type linearData struct {
	Weight  []float32 `json:"weight"`
	Bias    []float32 `json:"bias"`
	Train16 struct {
		X [][]float32 `json:"x"`
		Y [][]float32 `json:"y"`
	} `json:"train16"`
}

func loadLinearData(t *testing.T) *linearData {
	t.Helper()
	path := filepath.Join("..", "testdata", "lightning", "data.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d linearData
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(d.Weight) != 4 || len(d.Bias) != 1 || len(d.Train16.X) != 16 {
		t.Fatalf("%s: want 4 weights, 1 bias, 16 rows; got %d, %d, %d", path, len(d.Weight), len(d.Bias), len(d.Train16.X))
	}
	return &d
}

// loaders returns the 16 rows in order, batch 4 (gen_lr_find.py's loader).
func (d *linearData) loaders() volt.Loaders {
	rows := make(data.Slice, len(d.Train16.X))
	for i := range rows {
		rows[i] = data.Example{Inputs: []data.Field{{Value: d.Train16.X[i]}}, Labels: []data.Field{{Value: d.Train16.Y[i]}}}
	}
	return volt.Loaders{Train: &data.DataLoader{Dataset: rows, BatchSize: 4}}
}

// linearModule is gen_lr_find.py's Model: Linear(4, 1), MSE, SGD with LR.
type linearModule struct {
	LR   float64
	Adam bool // Adam instead of SGD, for a test with optimizer state
	init *linearData
}

func (m *linearModule) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	scope := s.Scope().In("layer")
	w := make([][]float32, 4)
	for i := range w {
		w[i] = []float32{m.init.Weight[i]}
	}
	x := b.Input(0)
	weight := scope.VariableWithValue("weight", w).NodeValue(x.Graph())
	bias := scope.VariableWithValue("bias", m.init.Bias).NodeValue(x.Graph())
	pred := graph.Add(graph.MatMul(x, weight), graph.Reshape(bias, 1, 1))
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
}

func (m *linearModule) ConfigureOptimizers() volt.Optimizers {
	if m.Adam {
		return volt.Optimize(optim.Adam(m.LR))
	}
	return volt.Optimize(optim.SGD(m.LR))
}

// newTrainer returns a quiet trainer rooted in a test directory.
func newTrainer(t *testing.T, cfg volt.Config) *volt.Trainer {
	t.Helper()
	cfg.DefaultRootDir = t.TempDir()
	cfg.DisableLoggers, cfg.DisableModelSummary = true, true
	return testutil.NewTrainer(t, cfg)
}

// ulps returns how many float64 steps apart a and b are (for messages).
func describeDiff(a, b float64) string { return fmt.Sprintf("%v vs %v (diff %g)", a, b, a-b) }
