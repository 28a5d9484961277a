// Command cnn trains a small convolutional network on MNIST with volt:
// conv 3×3 32 + ReLU, 2×2 max-pool, conv 3×3 64 + ReLU, 2×2 max-pool,
// dense 128, dense 10; Adam 1e-3, batch 64 (package examples/cnn/cnn). On
// the pure-Go backend volt runs the convolutions on oneDNN when Debian's
// libdnnl2 is installed (internal/gokernels, internal/onednn) and
// max-pooling with AVX-512 kernels: the whole run (one epoch, test,
// predictions) took 14 s on 2 cores; without oneDNN the convolutions go
// through the backend's matmul (internal/golower), about a minute an epoch
// instead of half an hour.
//
//	GOTOOLCHAIN=auto GOEXPERIMENT=simd go run ./examples/cnn
//
// After the test run it predicts the first 10 test images (Trainer.Predict
// and volt.PredictionRows) and prints their predicted and true digits. The
// last line printed is test_acc=….
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/examples/cnn/cnn"
	"github.com/voltml/volt/examples/internal/cmdexit"
	"github.com/voltml/volt/examples/internal/digits"
)

func main() { cmdexit.Exit("cnn", run(os.Args[1:], os.Stdout, os.Stderr)) }

// run trains and tests the network as the flags in args say, printing the
// results to out and progress to errOut.
func run(args []string, out, errOut io.Writer) error {
	flags := flag.NewFlagSet("cnn", flag.ContinueOnError)
	epochs := volt.EpochsFlag(flags, "epochs", 1, "training epochs")
	trainBatches := flags.Int("train-batches", 0, "training batches per epoch (0: all)")
	evalBatches := flags.Int("eval-batches", 0, "validation and test batches (0: all)")
	root := flags.String("root", ".", "where volt_logs/ is written")
	progress := flags.Bool("progress", true, "show progress on stderr")
	flags.SetOutput(errOut)
	if err := flags.Parse(args); err != nil {
		return err
	}
	volt.SeedEverything(42)
	dm, err := digits.Loaders(64, 2)
	if err != nil {
		return err
	}
	cfg := volt.Config{MaxEpochs: *epochs, DefaultRootDir: *root, Log: slog.New(slog.NewTextHandler(errOut, nil)),
		EnableProgressBar: volt.Ptr(*progress)}
	if *trainBatches > 0 {
		cfg.LimitTrainBatches = volt.Batches(*trainBatches)
	}
	if *evalBatches > 0 {
		cfg.LimitValBatches, cfg.LimitTestBatches = volt.Batches(*evalBatches), volt.Batches(*evalBatches)
	}
	if *progress {
		bar := callback.NewProgressBar(callback.ProgressBarConfig{Writer: errOut})
		cfg.Callbacks = append(cfg.Callbacks, bar)
	}
	trainer, err := volt.NewTrainer(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	model := cnn.New()
	if err := trainer.Fit(ctx, model, dm); err != nil {
		return err
	}
	valAcc := trainer.CallbackMetrics()["val_acc"] // Test replaces the callback metrics
	results, err := trainer.Test(ctx, model, dm)
	if err != nil {
		return err
	}
	if err := printPredictions(ctx, trainer, model, dm.Test[0].(*data.DataLoader).Dataset, out); err != nil {
		return err
	}
	fmt.Fprintf(out, "val_acc=%.4f\n", valAcc)
	fmt.Fprintf(out, "test_loss=%.4f\n", results[0]["test_loss"])
	fmt.Fprintf(out, "test_acc=%.4f\n", results[0]["test_acc"])
	return nil
}

// printPredictions predicts the first 10 images of test with model and
// prints the predicted digits, then the true ones.
func printPredictions(ctx context.Context, trainer *volt.Trainer, model volt.Module, test data.Dataset, out io.Writer) error {
	const n = 10
	first, err := digits.First(test, n)
	if err != nil {
		return err
	}
	preds, err := trainer.Predict(ctx, model, volt.Loaders{Predict: []data.Loader{&data.DataLoader{Dataset: first, BatchSize: n}}})
	if err != nil {
		return err
	}
	rows, err := volt.PredictionRows(preds[0]) // one row per image: its predicted class
	if err != nil {
		return err
	}
	fmt.Fprint(out, "predicted:")
	for _, r := range rows {
		fmt.Fprintf(out, " %d", int(r[0]))
	}
	fmt.Fprint(out, "\ntrue:     ")
	for _, ex := range first {
		fmt.Fprintf(out, " %d", ex.Labels[0].Value)
	}
	fmt.Fprintln(out)
	return nil
}
