// Command autoencoder trains a dense autoencoder on MNIST with volt
// (package examples/autoencoder/ae: 784 → 256 → 32 → 256 → 784, ReLU, a
// sigmoid output, the mean squared error of the reconstruction; Adam
// 1e-3, batch 64), reading the digits offline as examples/mnist does.
//
//	GOTOOLCHAIN=auto GOEXPERIMENT=simd go run ./examples/autoencoder
//
// It trains 2 epochs, validates on the last 5000 training images after
// each, and tests on the test set. Stdout ends with baseline_mse=… (the
// error of predicting every test image as the training set's mean image)
// and test_mse=… (the reconstruction error; test_mse/baseline_mse is the
// fraction of the pixel variance the 32 numbers of the code leave
// unexplained). -png FILE writes the first 10 test digits above their
// reconstructions.
package main

import (
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"os"
	"os/signal"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/datasets/mnist"
	"github.com/voltml/volt/examples/autoencoder/ae"
	"github.com/voltml/volt/examples/internal/cmdexit"
	"github.com/voltml/volt/examples/internal/digits"
)

func main() { cmdexit.Exit("autoencoder", run(os.Args[1:], os.Stdout, os.Stderr)) }

// run trains and tests the autoencoder as the flags in args say, printing
// the results to out and progress to errOut.
func run(args []string, out, errOut io.Writer) error {
	flags := flag.NewFlagSet("autoencoder", flag.ContinueOnError)
	epochs := volt.EpochsFlag(flags, "epochs", 2, "training epochs")
	trainBatches := flags.Int("train-batches", 0, "training batches per epoch (0: all)")
	evalBatches := flags.Int("eval-batches", 0, "validation and test batches (0: all)")
	code := flags.Int("code", 32, "width of the code")
	root := flags.String("root", ".", "where volt_logs/ is written")
	pngPath := flags.String("png", "", "write the first 10 test digits and their reconstructions to this PNG file")
	progress := flags.Bool("progress", true, "show progress on stderr")
	flags.SetOutput(errOut)
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *code < 1 {
		return fmt.Errorf("-code %d: the code needs at least 1 number", *code)
	}
	volt.SeedEverything(42)
	const batch = 64
	dm, err := digits.Loaders(batch, 2)
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
		cfg.Callbacks = append(cfg.Callbacks, callback.NewProgressBar(callback.ProgressBarConfig{Writer: errOut}))
	}
	trainer, err := volt.NewTrainer(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	model := ae.New()
	model.Code = *code
	if err := trainer.Fit(ctx, model, dm); err != nil {
		return err
	}
	valLoss := trainer.CallbackMetrics()["val_loss"] // Test replaces the callback metrics
	results, err := trainer.Test(ctx, model, dm)
	if err != nil {
		return err
	}
	train, test := dm.Train.(*data.DataLoader).Dataset, dm.Test[0].(*data.DataLoader).Dataset
	tested := test.Len()
	if *evalBatches > 0 {
		tested = min(tested, *evalBatches*batch)
	}
	baseline, err := meanImageMSE(train, test, tested)
	if err != nil {
		return err
	}
	if *pngPath != "" {
		if err := writeReconstructions(ctx, trainer, model, test, *pngPath); err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %s\n", *pngPath)
	}
	fmt.Fprintf(out, "val_mse=%.5f\n", valLoss)
	fmt.Fprintf(out, "baseline_mse=%.5f\n", baseline)
	fmt.Fprintf(out, "test_mse=%.5f\n", results[0]["test_loss"])
	return nil
}

// meanImageMSE is the mean squared error, over the first n images of test,
// of predicting each as the mean image of train: the error of a model that
// has learned the pixels' averages and nothing of the digit in front of it.
func meanImageMSE(train, test data.Dataset, n int) (float64, error) {
	mean := make([]float64, mnist.ImageSize)
	for i := range train.Len() {
		ex, err := train.Get(i)
		if err != nil {
			return 0, err
		}
		for j, v := range ex.Inputs[0].Value.([]float32) {
			mean[j] += float64(v)
		}
	}
	for j := range mean {
		mean[j] /= float64(train.Len())
	}
	var sum float64
	for i := range n {
		ex, err := test.Get(i)
		if err != nil {
			return 0, err
		}
		for j, v := range ex.Inputs[0].Value.([]float32) {
			d := float64(v) - mean[j]
			sum += d * d
		}
	}
	return sum / float64(n*mnist.ImageSize), nil
}

// writeReconstructions predicts the first 10 images of test with model and
// writes them (top row) and their reconstructions (bottom row) as a
// grayscale PNG at path.
func writeReconstructions(ctx context.Context, trainer *volt.Trainer, model volt.Module, test data.Dataset, path string) error {
	const n, side = 10, 28
	first, err := digits.First(test, n)
	if err != nil {
		return err
	}
	preds, err := trainer.Predict(ctx, model, volt.Loaders{Predict: []data.Loader{&data.DataLoader{Dataset: first, BatchSize: n}}})
	if err != nil {
		return err
	}
	rows, err := volt.PredictionRows(preds[0]) // one row per image: its 784 reconstructed pixels
	if err != nil {
		return err
	}
	img := image.NewGray(image.Rect(0, 0, n*side, 2*side))
	for k := range n {
		for p, v := range first[k].Inputs[0].Value.([]float32) {
			img.SetGray(k*side+p%side, p/side, color.Gray{Y: uint8(255*v + 0.5)})
		}
		for p, v := range rows[k] {
			img.SetGray(k*side+p%side, side+p/side, color.Gray{Y: uint8(255*min(max(v, 0), 1) + 0.5)})
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
