package volt_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/logger"
)

// benchStepLogModule is a dense layer whose validation step logs its loss
// per epoch only (Lightning's default in evaluation) or also per step.
type benchStepLogModule struct {
	boring
	onStep bool
}

func (m *benchStepLogModule) ValidationStep(s *volt.Step, b volt.Batch) {
	out := layers.DenseWithBias(s.Scope().In("dense"), b.Input(0), 10)
	s.Log("val_loss", graph.ReduceAllMean(graph.Square(out)), volt.OnStep(m.onStep))
}

// discardLogger takes rows and keeps nothing.
type discardLogger struct{}

func (discardLogger) LogMetrics(map[string]float64, int64) error { return nil }
func (discardLogger) LogHyperparams(map[string]any) error        { return nil }
func (discardLogger) Save() error                                { return nil }
func (discardLogger) Finalize(string) error                      { return nil }

// BenchmarkValidationStepLogs: one validation run of 32 batches of 64
// examples, with a logger, logging its loss per epoch only or also per step
// (a row to the logger after every batch). Compare the two with benchstat;
// ns/batch is the cost per step.
func BenchmarkValidationStepLogs(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var batches []*data.Batch
	for range 32 {
		x := make([]float32, 64*32)
		for i := range x {
			x[i] = rng.Float32()
		}
		batches = append(batches, &data.Batch{Inputs: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(x, 64, 32)},
			Labels: []*tensors.Tensor{tensors.FromValue(make([]int32, 64))}, Size: 64})
	}
	for _, bc := range []struct {
		name   string
		onStep bool
	}{{"epoch-only", false}, {"on-step", true}} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := quiet(volt.Config{})
			cfg.DisableLoggers, cfg.Loggers = false, []logger.Logger{discardLogger{}}
			tr := testutil.NewTrainer(b, cfg)
			m := &benchStepLogModule{onStep: bc.onStep}
			benchValidate(b, tr, m, batches)
		})
	}
}
