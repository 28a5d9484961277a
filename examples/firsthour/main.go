// Command firsthour is the program of issue 24, first written from the README
// and docs/from-lightning.md alone, then cut down where volt made its user
// write more than Lightning does (issue 42; count_test.go keeps it within
// 1.3× of the Lightning program's lines): an MLP with LayerNorm and dropout
// on a synthetic regression, a custom data module, ModelCheckpoint on
// val_loss, EarlyStopping, TensorBoard, then LoadModule and Predict.
// tools/firsthour/lightning_firsthour.py is the same program in Lightning
// 2.2.5; main_test.go runs this one small.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"

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

func (m *MLP) forward(s *volt.Step, x *volt.Node) *volt.Node {
	for i, width := range m.Hidden {
		scope := s.Scope().In("hidden_%d", i)
		x = nn.Dropout(scope, nn.ReLU(nn.LayerNorm(scope, nn.Linear(scope, x, width))), m.Dropout)
	}
	return nn.Linear(s.Scope().In("out"), x, 1)
}

func (m *MLP) TrainingStep(s *volt.Step, b volt.Batch) *volt.Node {
	loss := nn.MSELoss(m.forward(s, b.Input(0)), b.Label(0))
	s.Log("train_loss", loss, volt.ProgBar)
	return loss
}

func (m *MLP) ValidationStep(s *volt.Step, b volt.Batch) {
	s.Log("val_loss", nn.MSELoss(m.forward(s, b.Input(0)), b.Label(0)), volt.ProgBar)
}

func (m *MLP) PredictStep(s *volt.Step, b volt.Batch) *volt.Node { return m.forward(s, b.Input(0)) }
func (m *MLP) ConfigureOptimizers() volt.Optimizers              { return volt.Optimize(optim.Adam(m.LR)) }
func (m *MLP) HParams() map[string]any                           { return volt.HParamsOf(m) } // save_hyperparameters()

// Regression is the data module: y = sin(x·w) + noise on N examples of 8
// features, split 80/20 into train and validation; Predict reads validation.
// data.Datasets supplies the loaders (Lightning's from_datasets).
type Regression struct {
	N int
	data.Datasets
}

func (d *Regression) Setup(volt.Stage) error {
	g := data.NewGenerator(0) // torch.Generator().manual_seed(0): the Lightning script's very x and noise
	xs, noise := g.Randn(d.N, 8), g.Randn(d.N, 1)
	ys := make([][]float32, d.N)
	for i, x := range xs {
		dot := 0.0
		for _, v := range x {
			dot += float64(v) / math.Sqrt(8) // every weight 8^-1/2: x·w is N(0, 1)
		}
		ys[i] = []float32{float32(math.Sin(dot)) + 0.1*noise[i][0]}
	}
	all, err := data.Rows(xs, ys)
	if err != nil {
		return err
	}
	cut := d.N * 8 / 10 // a data.Slice slices as TensorDataset's tensors do
	d.Train, d.Val, d.Predict = all[:cut], all[cut:], all[cut:]
	return nil
}

func main() {
	epochs := volt.EpochsFlag(flag.CommandLine, "epochs", 30, "maximum epochs (-1: no limit)")
	n := flag.Int("n", 2000, "examples")
	dir := flag.String("dir", ".", "root directory of logs and checkpoints")
	flag.Parse() // -h: usage, exit 0; a bad flag (-epochs 0 too): the error and usage, exit 2
	volt.SeedEverything(42)
	ckpt := callback.NewModelCheckpoint(callback.ModelCheckpointConfig{Monitor: "val_loss", Filename: "{epoch}-{val_loss:.4f}"})
	stop := callback.NewEarlyStopping(callback.EarlyStoppingConfig{Monitor: "val_loss", Patience: 5})
	trainer, err := volt.NewTrainer(volt.Config{MaxEpochs: *epochs, DefaultRootDir: *dir, HandleSignals: true,
		Loggers: []volt.Logger{tensorboard.New(tensorboard.Config{SaveDir: *dir})}, Callbacks: []volt.Callback{ckpt, stop}})
	volt.ExitOnError(err) // as an exception ends a script: the error on stderr, exit 1 (130 after Ctrl-C)
	ctx := context.Background()
	dm := &Regression{N: *n, Datasets: data.Datasets{BatchSize: 32}}
	volt.ExitOnError(trainer.Fit(ctx, &MLP{Hidden: []int{64, 64}, Dropout: 0.1, LR: 1e-3}, dm))
	fmt.Println("best:", ckpt.BestModelPath())
	best, err := volt.LoadModule(ckpt.BestModelPath(), &MLP{})
	volt.ExitOnError(err)
	rows, err := trainer.PredictRows(ctx, best, dm) // torch.cat(trainer.predict(best, dm))
	volt.ExitOnError(err)
	fmt.Println("predictions:", len(rows), "first:", rows[0])
}
