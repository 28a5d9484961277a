// Command userprog is a training program written as a user would from the
// README, against volt's public API only, for the kill tests of package
// killtest: a one-layer regression trained for a few epochs, logging its
// loss per step and per epoch to a CSV and a TensorBoard logger sharing one
// version directory under -root, with a checkpoint every two optimization
// steps (ModelCheckpoint, last.ckpt). With -resume it continues from
// FromCheckpoint("last"), as a program restarted after a crash does.
//
// Usage:
//
//	userprog -root DIR [-resume]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/logger"
	"github.com/voltml/volt/logger/tensorboard"
	"github.com/voltml/volt/optim"
)

// Training sizes: 4 epochs of 8 batches of 8 examples, 32 steps.
const (
	epochs    = 4
	examples  = 64
	batchSize = 8
	features  = 4
	seed      = 5
)

func main() {
	root := flag.String("root", "", "log root directory (required)")
	resume := flag.Bool("resume", false, `resume from FromCheckpoint("last")`)
	flag.Parse()
	if *root == "" {
		fmt.Fprintln(os.Stderr, "userprog: -root is required")
		os.Exit(2)
	}
	if err := run(*root, *resume); err != nil {
		fmt.Fprintln(os.Stderr, "userprog:", err)
		os.Exit(1)
	}
}

// run trains, or resumes, and prints where the logs are.
func run(root string, resume bool) error {
	volt.SeedEverything(seed)
	dir, err := logger.VersionDir{SaveDir: root}.Pin()
	if err != nil {
		return err
	}
	csvLog, err := logger.NewCSV(logger.CSVConfig{}.WithDir(dir))
	if err != nil {
		return err
	}
	tbLog := tensorboard.New(tensorboard.Config{}.WithDir(dir))
	err = tbLog.Validate()
	if err != nil {
		return err
	}
	mc := callback.NewModelCheckpoint(callback.ModelCheckpointConfig{EveryNTrainSteps: 2, SaveLast: true})
	t, err := volt.NewTrainer(volt.Config{
		MaxEpochs:           epochs,
		LogEveryNSteps:      1,
		Loggers:             []logger.Logger{csvLog, tbLog},
		Callbacks:           []volt.Callback{mc},
		DisableModelSummary: true,
		Log:                 slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return err
	}
	var opts []volt.RunOption
	if resume {
		opts = append(opts, volt.FromCheckpoint("last"))
	}
	if err := t.Fit(context.Background(), &model{}, loaders(), opts...); err != nil {
		return err
	}
	fmt.Println("logged to", t.LogDir(), "at global step", t.GlobalStep())
	return nil
}

// model is one dense layer, trained with Adam.
type model struct{}

func (*model) forward(s *volt.Step, x *graph.Node) *graph.Node {
	return layers.DenseWithBias(s.Scope().In("dense"), x, 1)
}

func (m *model) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.forward(s, b.Input(0))})
	s.Log("train_loss", l, volt.OnStep(true), volt.OnEpoch(true))
	return l
}

func (m *model) ValidationStep(s *volt.Step, b volt.Batch) {
	s.Log("val_loss", loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.forward(s, b.Input(0))}))
}

func (*model) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(0.01)) }

// loaders returns shuffled training batches and one validation batch.
func loaders() volt.Loaders {
	return volt.Loaders{
		Train: &data.DataLoader{Dataset: regression(examples, 1), BatchSize: batchSize, Shuffle: true},
		Val:   []data.Loader{&data.DataLoader{Dataset: regression(16, 2), BatchSize: 16}},
	}
}

// regression returns n examples of y = x·w + 0.5 with random features.
func regression(n int, seed uint64) data.Slice {
	r := rand.New(rand.NewPCG(seed, 3))
	w := []float32{1, -2, 0.5, 3}
	out := make(data.Slice, n)
	for i := range out {
		x := make([]float32, features)
		y := float32(0.5)
		for j := range x {
			x[j] = float32(r.NormFloat64())
			y += x[j] * w[j]
		}
		out[i] = data.Example{Inputs: []data.Field{{Value: x}}, Labels: []data.Field{{Value: []float32{y}}}}
	}
	return out
}
