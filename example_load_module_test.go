package volt_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
)

// exRegressor is a model with hyper-parameters: its width and learning rate.
type exRegressor struct {
	Hidden int
	LR     float64
}

func (m *exRegressor) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	h := graph.Tanh(layers.DenseWithBias(s.Scope().In("hidden"), b.Input(0), m.Hidden))
	return layers.DenseWithBias(s.Scope().In("out"), h, 1)
}

func (m *exRegressor) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.PredictStep(s, b)})
}

func (m *exRegressor) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.SGD(m.LR)) }

// HParams records the fields in every checkpoint (and hparams.yaml).
func (m *exRegressor) HParams() map[string]any { return map[string]any{"hidden": m.Hidden, "lr": m.LR} }

// LoadModule builds a module from a checkpoint: its fields from the saved
// hyper-parameters, its weights from the saved ones. Predict then gives what
// the trained module gave, and Fit trains on from those weights (a new run:
// fresh optimizer, global step from 0).
func ExampleLoadModule() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "volt-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.ckpt")

	trained := &exRegressor{Hidden: 16, LR: 0.02}
	t, _ := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 3}))
	if err := t.Fit(ctx, trained, exData()); err != nil {
		fmt.Println(err)
		return
	}
	if err := t.SaveCheckpoint(path, true); err != nil { // weights only
		fmt.Println(err)
		return
	}
	before, _ := t.Predict(ctx, trained, exData())

	// Later, in another program:
	m, err := volt.LoadModule(path, &exRegressor{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("hidden=%d lr=%g\n", m.Hidden, m.LR)
	p, _ := volt.NewTrainer(exQuiet(volt.Config{}))
	after, _ := p.Predict(ctx, m, exData())
	fmt.Println("same first prediction:", before[0][0].Value().([][]float32)[0][0] == after[0][0].Value().([][]float32)[0][0])

	ft, _ := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 1}))
	if err := ft.Fit(ctx, m, exData()); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("warm-started Fit: global step", ft.GlobalStep())
	// Output:
	// hidden=16 lr=0.02
	// same first prediction: true
	// warm-started Fit: global step 4
}
