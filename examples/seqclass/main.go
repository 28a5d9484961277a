// Command seqclass trains an LSTM sequence classifier (package classifier:
// nn.Embedding → nn.LSTM → last hidden state → nn.Linear, PyTorch's
// initialisation) on the temporal-order task of the LSTM paper, scaled
// down: 32 noise tokens, 3 of them replaced by X or Y at random positions,
// the class the X/Y order (8 classes, chance 1/8). The data are generated
// from fixed seeds, offline: 4096 training and 1024 validation sequences.
// Adam with PyTorch's OneCycleLR (peak 1e-2, momentum not cycled) stepped
// every batch, gradient clipping by norm 1.0, 3 epochs of batch 32,
// validation after each.
//
//	GOEXPERIMENT=simd go run ./examples/seqclass
//
// The last lines printed are classes=…, chance=…, params=…, fit_seconds=…,
// train_loss=…, val_loss=… and val_acc=… (volt/metrics' accuracy over the
// whole validation set after the last epoch).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/examples/internal/cmdexit"
	"github.com/voltml/volt/examples/seqclass/classifier"
	"github.com/voltml/volt/optim"
)

func main() { cmdexit.Exit("seqclass", run(os.Args[1:], os.Stdout, os.Stderr)) }

// run trains and validates the classifier as the flags in args say,
// printing the results to out and progress and logs to errOut.
func run(args []string, out, errOut io.Writer) error {
	flags := flag.NewFlagSet("seqclass", flag.ContinueOnError)
	var task classifier.Task
	var cfg classifier.Config
	flags.IntVar(&task.Length, "length", 32, "tokens per sequence")
	flags.IntVar(&task.Marks, "marks", 3, "marked positions (X or Y); 2^marks classes")
	flags.IntVar(&cfg.Embed, "embed", 8, "embedding width")
	flags.IntVar(&cfg.Hidden, "hidden", 32, "LSTM hidden units")
	nTrain := flags.Int("train", 4096, "training sequences")
	nVal := flags.Int("val", 1024, "validation sequences")
	epochs := volt.EpochsFlag(flags, "epochs", 3, "training epochs")
	batch := flags.Int("batch", 32, "sequences per batch")
	lr := flags.Float64("lr", 1e-2, "peak learning rate of the one-cycle schedule")
	seed := flags.Uint64("seed", 1, "seed for the weights, the data and the shuffling")
	root := flags.String("root", ".", "where volt_logs/ is written")
	progress := flags.Bool("progress", true, "show progress on stderr")
	flags.SetOutput(errOut)
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *nTrain < 1 || *nVal < 1 || *epochs < 1 || *batch < 1 {
		return fmt.Errorf("-train, -val, -epochs and -batch must be positive, got %d, %d, %d, %d", *nTrain, *nVal, *epochs, *batch)
	}
	if !(*lr > 0) {
		return fmt.Errorf("-lr must be positive, got %g", *lr)
	}
	if err := task.Validate(); err != nil {
		return fmt.Errorf("-length %d, -marks %d: %w", task.Length, task.Marks, err)
	}
	cfg.Vocab, cfg.Classes = classifier.Vocab, task.Classes()
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("-embed %d, -hidden %d: %w", cfg.Embed, cfg.Hidden, err)
	}
	train, err := task.Generate(*nTrain, *seed)
	if err != nil {
		return err
	}
	val, err := task.Generate(*nVal, *seed+1)
	if err != nil {
		return err
	}
	volt.SeedEverything(*seed)

	steps := *epochs * ((*nTrain + *batch - 1) / *batch)
	sched := optim.NewOneCycleLR(*lr, max(2, steps))
	model := &classifier.Module{Config: cfg, Optimizers: volt.Optimizers{{
		Optimizer: optim.Adam(*lr), Scheduler: sched, Interval: volt.IntervalStep}}}
	tcfg := volt.Config{MaxEpochs: *epochs, GradientClipVal: 1, GradientClipAlgorithm: volt.ClipNorm,
		DefaultRootDir: *root, Log: slog.New(slog.NewTextHandler(errOut, nil)), EnableProgressBar: volt.Ptr(*progress)}
	if *progress {
		tcfg.Callbacks = append(tcfg.Callbacks, callback.NewProgressBar(callback.ProgressBarConfig{Writer: errOut}))
	}
	trainer, err := volt.NewTrainer(tcfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	loaders := volt.Loaders{Train: &data.DataLoader{Dataset: train, BatchSize: *batch, Shuffle: true},
		Val: []data.Loader{&data.DataLoader{Dataset: val, BatchSize: 256}}}
	start := time.Now()
	if err := trainer.Fit(ctx, model, loaders); err != nil {
		return err
	}
	elapsed := time.Since(start)
	m := trainer.CallbackMetrics()
	fmt.Fprintf(out, "classes=%d\nchance=%.4f\nparams=%d\n", cfg.Classes, 1/float64(cfg.Classes), cfg.Params())
	fmt.Fprintf(out, "fit_seconds=%.2f\n", elapsed.Seconds())
	fmt.Fprintf(out, "train_loss=%.4f\nval_loss=%.4f\nval_acc=%.4f\n", m["train_loss"], m["val_loss"], m["val_acc"])
	return nil
}
