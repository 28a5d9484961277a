package batchnorm_test

import (
	"context"
	"math"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/batchnorm"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// bnModule normalises its [batch, 2] input and learns to match a label:
// the loss moves the weight and bias, the batches move the running
// statistics.
type bnModule struct{}

func (bnModule) normalize(s *volt.Step, x *graph.Node) *graph.Node {
	return batchnorm.New(s.Scope().In("bn"), x, -1).Done()
}

func (m bnModule) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.normalize(s, b.Input(0))})
}

func (m bnModule) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.normalize(s, b.Input(0))
}

func (bnModule) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.SGD(0.1)) }

// TestTrainerEvaluatesWithRunningStats: after Fit, Predict (an evaluation
// graph, traced before the last training steps changed the statistics)
// normalises with the running mean and variance the training steps left
// and the trained weight and bias, not with the batch's statistics.
func TestTrainerEvaluatesWithRunningStats(t *testing.T) {
	examples := make(data.Slice, 16)
	for i := range examples {
		x := []float32{float32(i)*0.5 + 3, float32(i%4) - 1}
		examples[i] = data.Example{Inputs: []data.Field{{Value: x}}, Labels: []data.Field{{Value: []float32{1, -1}}}}
	}
	probe := data.Slice{{Inputs: []data.Field{{Value: []float32{4, 0.5}}}}, {Inputs: []data.Field{{Value: []float32{6, -2}}}}}
	tr, err := volt.NewTrainer(volt.Config{MaxEpochs: 3, NumSanityValSteps: volt.Ptr(0), DisableLoggers: true,
		DisableCheckpointing: true, DisableModelSummary: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m := bnModule{}
	loaders := volt.Loaders{Train: &data.DataLoader{Dataset: examples, BatchSize: 4},
		Predict: []data.Loader{&data.DataLoader{Dataset: probe, BatchSize: 2}}}
	if _, err := tr.Predict(ctx, m, loaders); err != nil { // traced with the initial statistics
		t.Fatal(err)
	}
	if err := tr.Fit(ctx, m, loaders); err != nil {
		t.Fatal(err)
	}
	preds, err := tr.Predict(ctx, m, loaders)
	if err != nil {
		t.Fatal(err)
	}
	got := tensors.MustCopyFlatData[float32](preds[0][0])
	value := func(name string) []float32 {
		return tensors.MustCopyFlatData[float32](tr.Store().GetVariable("/bn/" + name).MustValue())
	}
	mean, variance, weight, bias := value("running_mean"), value("running_var"), value("weight"), value("bias")
	if tracked := tensors.ToScalar[int64](tr.Store().GetVariable("/bn/num_batches_tracked").MustValue()); tracked != 12 {
		t.Errorf("num_batches_tracked %d after 3 epochs of 4 batches, want 12", tracked)
	}
	for i, ex := range probe {
		x := ex.Inputs[0].Value.([]float32)
		for f := range 2 {
			want := (float64(x[f])-float64(mean[f]))/math.Sqrt(float64(variance[f])+1e-5)*float64(weight[f]) + float64(bias[f])
			if d := math.Abs(float64(got[i*2+f]) - want); d > 1e-5 {
				t.Errorf("probe %d feature %d: predicted %g, running statistics give %g", i, f, got[i*2+f], want)
			}
		}
	}
}
