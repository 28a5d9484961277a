// Command tuner finds a learning rate for the MNIST MLP with volt's
// learning-rate finder (Lightning's Tuner.lr_find), then trains with it:
//
//	GOTOOLCHAIN=auto GOEXPERIMENT=simd go run ./examples/tuner
//	go run ./cmd/volt report volt_logs   # the run's metrics and the finder's curve
//
// The sweep trains a copy of the model for -lr-steps optimization steps at
// learning rates growing exponentially from -min-lr to -max-lr, and suggests
// the rate where the smoothed loss falls fastest. It prints
// suggested_lr=…; the curve is saved as lr_find.csv in the run's log
// directory, where `volt report` draws it with the suggestion marked. The
// model (784-256-256-10, Adam) then trains from its initial weights at that
// rate, and the last line printed is test_acc=….
package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/voltml/volt/examples/internal/cmdexit"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/voltml/volt"
	"github.com/voltml/volt/examples/internal/digits"
	"github.com/voltml/volt/report"
	"github.com/voltml/volt/tuner"
)

func main() { cmdexit.Exit("tuner", run(os.Args[1:], os.Stdout, os.Stderr)) }

// run finds the learning rate, trains and tests as the flags in args say,
// printing the results to out and volt's messages to errOut.
func run(args []string, out, errOut io.Writer) error {
	flags := flag.NewFlagSet("tuner", flag.ContinueOnError)
	lrSteps := flags.Int("lr-steps", 100, "optimization steps of the learning-rate sweep")
	minLR := flags.Float64("min-lr", 1e-6, "smallest learning rate of the sweep")
	maxLR := flags.Float64("max-lr", 1, "largest learning rate of the sweep")
	epochs := volt.EpochsFlag(flags, "epochs", 1, "training epochs at the suggested rate")
	trainBatches := flags.Int("train-batches", 0, "training batches per epoch (0: all)")
	evalBatches := flags.Int("eval-batches", 0, "validation and test batches (0: all)")
	batch := flags.Int("batch", 64, "batch size")
	seed := flags.Uint64("seed", 42, "seed for weights and shuffling")
	root := flags.String("root", ".", "where volt_logs/ is written")
	flags.SetOutput(errOut)
	if err := flags.Parse(args); err != nil {
		return err
	}
	volt.SeedEverything(*seed)
	dm, err := digits.Loaders(*batch, 2)
	if err != nil {
		return err
	}
	cfg := volt.Config{
		MaxEpochs:            *epochs,
		DefaultRootDir:       *root,
		DisableCheckpointing: true,
		Log:                  slog.New(slog.NewTextHandler(errOut, nil)),
	}
	if *trainBatches > 0 {
		cfg.LimitTrainBatches = volt.Batches(*trainBatches)
	}
	if *evalBatches > 0 {
		cfg.LimitValBatches, cfg.LimitTestBatches = volt.Batches(*evalBatches), volt.Batches(*evalBatches)
	}
	trainer, err := volt.NewTrainer(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	model := digits.NewMLP()
	curve := filepath.Join(trainer.LogDir(), report.LRFindFileName)
	found, err := tuner.LRFind(ctx, trainer, model, dm, tuner.LRFindOptions{
		MinLR: *minLR, MaxLR: *maxLR, NumTraining: *lrSteps,
		Apply:   func(lr float64) { model.LR = lr }, // train at the suggestion
		CSVPath: curve,
	})
	if err != nil {
		return err
	}
	if found.SuggestedIndex < 0 {
		return fmt.Errorf("the sweep made no suggestion (%d points); use more -lr-steps", len(found.Losses))
	}
	fmt.Fprintf(out, "suggested_lr=%.3g (step %d of %d%s)\n", found.SuggestedLR, found.SuggestedIndex, len(found.Losses),
		map[bool]string{true: ", the loss diverged before the end", false: ""}[found.StoppedEarly])
	fmt.Fprintf(out, "curve: %s\n", curve)

	if err := trainer.Fit(ctx, model, dm); err != nil {
		return err
	}
	results, err := trainer.Test(ctx, model, dm)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "test_acc=%.4f\n", results[0]["test_acc"])
	return nil
}
