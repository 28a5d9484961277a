// Command initgap is volt's side of the initialisation experiment of issue
// 23: an 8-64-64-1 ReLU MLP, Adam 1e-3, batch 32 (shuffled), MSE, 10
// epochs on lightning_mlp.py's synthetic regression, trained once per seed
// with GoMLX's default initialisation (He-normal weights, zero biases) and
// once with PyTorch's (torchinit); it prints one JSON line per run with the
// val_loss after each epoch. run.sh runs it beside real Lightning on the
// same data and prints the comparison.
//
//	GOTOOLCHAIN=auto GOEXPERIMENT=simd go run ./tools/initgap -data DIR/data.safetensors -seeds 5
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
	"github.com/voltml/volt/parity"
	"github.com/voltml/volt/torchinit"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "initgap:", err)
		os.Exit(1)
	}
}

// mlp is the experiment's model; torch switches PyTorch's initialisation on.
type mlp struct{ torch bool }

func (m *mlp) forward(scope *model.Scope, x *graph.Node) *graph.Node {
	if m.torch {
		defer torchinit.Apply(scope)
	}
	for i, width := range []int{64, 64, 1} {
		x = layers.DenseWithBias(scope.In("layer_%d", i), x, width)
		if i < 2 {
			x = activation.Relu(x)
		}
	}
	return x
}

func (m *mlp) mse(s *volt.Step, b volt.Batch) *graph.Node {
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.forward(s.Scope().In("mlp"), b.Input(0))})
}

func (m *mlp) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node { return m.mse(s, b) }
func (m *mlp) ValidationStep(s *volt.Step, b volt.Batch)           { s.Log("val_loss", m.mse(s, b)) }
func (m *mlp) ConfigureOptimizers() volt.Optimizers                { return volt.Optimize(optim.Adam(1e-3)) }

// valLosses records val_loss at the end of every validation.
type valLosses struct{ values []float64 }

func (v *valLosses) OnValidationEnd(t *volt.Trainer) error {
	if t.State().Stage != volt.RunningSanityCheck {
		v.values = append(v.values, t.CallbackMetrics()["val_loss"])
	}
	return nil
}

func run(args []string, out io.Writer) error {
	flags := flag.NewFlagSet("initgap", flag.ContinueOnError)
	path := flags.String("data", "", "lightning_mlp.py's data.safetensors")
	seeds := flags.Int("seeds", 5, "runs per initialisation (seeds 0..n-1)")
	epochs := flags.Int("epochs", 10, "training epochs")
	if err := flags.Parse(args); err != nil {
		return err
	}
	file, err := parity.Read(*path)
	if err != nil {
		return err
	}
	train, err := file.Examples([]string{"train_x"}, []string{"train_y"})
	if err != nil {
		return err
	}
	val, err := file.Examples([]string{"val_x"}, []string{"val_y"})
	if err != nil {
		return err
	}
	for _, torch := range []bool{false, true} {
		for seed := range *seeds {
			rec := &valLosses{}
			noSanity, seed64 := 0, uint64(seed)
			cfg := volt.Config{MaxEpochs: *epochs, Seed: &seed64, NumSanityValSteps: &noSanity, Callbacks: []volt.Callback{rec},
				DisableLoggers: true, DisableCheckpointing: true, DisableModelSummary: true, Log: slog.New(slog.DiscardHandler)}
			tr, err := volt.NewTrainer(cfg)
			if err != nil {
				return err
			}
			loaders := volt.Loaders{
				Train: &data.DataLoader{Dataset: train, BatchSize: 32, Shuffle: true},
				Val:   []data.Loader{&data.DataLoader{Dataset: val, BatchSize: 32}},
			}
			if err := tr.Fit(context.Background(), &mlp{torch: torch}, loaders); err != nil {
				return err
			}
			init := "gomlx"
			if torch {
				init = "torch"
			}
			line, _ := json.Marshal(map[string]any{"init": init, "seed": seed, "val_loss": rec.values})
			fmt.Fprintln(out, string(line))
		}
	}
	return nil
}
