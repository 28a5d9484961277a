// Command firsthour is the program of issue 24, first written from the README
// and docs/from-lightning.md alone, then cut down where volt made its user
// write more than Lightning does (tools/firsthour/count.py counts both): an MLP with LayerNorm and dropout on a
// synthetic regression, a custom data module, ModelCheckpoint on val_loss,
// EarlyStopping, TensorBoard, then LoadModule and Predict.
// tools/firsthour/lightning_firsthour.py is the same program in Lightning
// 2.2.5; main_test.go runs this one small.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/logger/tensorboard"
	"github.com/voltml/volt/nn"
	"github.com/voltml/volt/optim"
)

// MLP is features → (Linear, LayerNorm, ReLU, Dropout) × len(Hidden) → 1.
type MLP struct {
	Hidden  []int
	Dropout float64
	LR      float64
}

func (m *MLP) forward(s *volt.Step, x *graph.Node) *graph.Node {
	for i, width := range m.Hidden {
		scope := s.Scope().In("hidden_%d", i)
		x = nn.Dropout(scope, nn.ReLU(nn.LayerNorm(scope, nn.Linear(scope, x, width))), m.Dropout)
	}
	return nn.Linear(s.Scope().In("out"), x, 1)
}

func (m *MLP) loss(s *volt.Step, b volt.Batch) *graph.Node {
	return nn.MSELoss(m.forward(s, b.Input(0)), b.Label(0))
}

func (m *MLP) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.loss(s, b)
	s.Log("train_loss", l, volt.ProgBar)
	return l
}
func (m *MLP) ValidationStep(s *volt.Step, b volt.Batch) {
	s.Log("val_loss", m.loss(s, b), volt.ProgBar)
}
func (m *MLP) PredictStep(s *volt.Step, b volt.Batch) *graph.Node { return m.forward(s, b.Input(0)) }
func (m *MLP) ConfigureOptimizers() volt.Optimizers               { return volt.Optimize(optim.Adam(m.LR)) }
func (m *MLP) HParams() map[string]any {
	return map[string]any{"hidden": m.Hidden, "dropout": m.Dropout, "lr": m.LR}
}

// Regression is the data module: y = sin(x·w) + noise on N examples of 8
// features, split 80/20 into train and validation; Predict reads validation.
type Regression struct {
	N, BatchSize int
	train, val   data.Dataset
}

func (d *Regression) Setup(stage volt.Stage) error {
	rng := rand.New(rand.NewPCG(0, 1))
	w := 1 / math.Sqrt(8) // every weight: x·w is N(0, 1), as in the Lightning script
	xs, ys := make([][]float32, d.N), make([][]float32, d.N)
	for i := range xs {
		x, dot := make([]float32, 8), 0.0
		for j := range x {
			x[j] = float32(rng.NormFloat64())
			dot += float64(x[j]) * w
		}
		xs[i], ys[i] = x, []float32{float32(math.Sin(dot) + 0.1*rng.NormFloat64())}
	}
	all, err := data.Rows(xs, ys)
	if err != nil {
		return err
	}
	d.train, d.val = all[:d.N*8/10], all[d.N*8/10:] // a data.Slice slices as TensorDataset's tensors do
	return nil
}

func (d *Regression) TrainDataloader() data.Loader {
	return &data.DataLoader{Dataset: d.train, BatchSize: d.BatchSize, Shuffle: true}
}
func (d *Regression) ValDataloaders() []data.Loader {
	return []data.Loader{&data.DataLoader{Dataset: d.val, BatchSize: d.BatchSize}}
}
func (d *Regression) PredictDataloaders() []data.Loader { return d.ValDataloaders() }

func main() {
	epochs := flag.Int("epochs", 30, "maximum epochs (0 means volt's default, 1000; -1 no limit)")
	n := flag.Int("n", 2000, "examples")
	dir := flag.String("dir", ".", "root directory of logs and checkpoints")
	flag.Parse() // -h: usage, exit 0; a bad flag: the error and usage, exit 2
	if err := run(*epochs, *n, *dir, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "firsthour:", err)
		os.Exit(volt.ExitCode(err)) // 130 after Ctrl-C, 1 for another error
	}
}

// run is the program: it trains for at most epochs on n examples, with its
// logs and checkpoints under dir, and prints its results on out.
func run(epochs, n int, dir string, out io.Writer) error {
	volt.SeedEverything(42)
	ckpt := callback.NewModelCheckpoint(callback.ModelCheckpointConfig{
		Monitor: "val_loss", Filename: "{epoch}-{val_loss:.4f}"})
	stop := callback.NewEarlyStopping(callback.EarlyStoppingConfig{Monitor: "val_loss", Patience: 5})
	trainer, err := volt.NewTrainer(volt.Config{
		MaxEpochs:      epochs,
		DefaultRootDir: dir,
		HandleSignals:  true, // Ctrl-C: finish the step, save a resumable checkpoint, return
		Loggers:        []volt.Logger{tensorboard.New(tensorboard.Config{SaveDir: dir})},
		Callbacks:      []volt.Callback{ckpt, stop},
	})
	if err != nil {
		return err
	}
	ctx := context.Background()
	dm := &Regression{N: n, BatchSize: 32}
	if err := trainer.Fit(ctx, &MLP{Hidden: []int{64, 64}, Dropout: 0.1, LR: 1e-3}, dm); err != nil {
		return err
	}
	fmt.Fprintln(out, "best:", ckpt.BestModelPath())

	best, err := volt.LoadModule(ckpt.BestModelPath(), &MLP{})
	if err != nil {
		return err
	}
	preds, err := trainer.Predict(ctx, best, dm)
	if err != nil {
		return err
	}
	rows, err := volt.PredictionRows(preds[0])
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "predictions:", len(rows), "first:", rows[0])
	return nil
}
