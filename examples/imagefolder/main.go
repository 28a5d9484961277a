// Command imagefolder writes MNIST as a folder of PNG images per class and
// trains the examples' CNN (examples/cnn's) on it through data.ImageFolder:
// dir/train/<digit>/*.png from MNIST's training set and dir/val/<digit>/
// from its test set, held out for validation. Training images are decoded
// on the loader's workers, padded by 2 black pixels and randomly cropped
// back to 28x28 (a shift of up to 2 pixels; no flips, which would change
// digits), and normalised with MNIST's mean and standard deviation.
//
//	GOTOOLCHAIN=auto GOEXPERIMENT=simd go run ./examples/imagefolder
//
// Without -dir the images go to a new temporary folder, removed at the
// end. With -dir they go to that folder, which is kept; it must be new,
// empty, or one this example wrote before (it holds volt-imagefolder.txt):
// any other non-empty folder is refused. The last line printed is
// val_acc=….
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/examples/internal/cmdexit"
	"github.com/voltml/volt/examples/internal/digits"
	"github.com/voltml/volt/examples/internal/mnistfolder"
)

func main() { cmdexit.Exit("imagefolder", run(os.Args[1:], os.Stdout, os.Stderr)) }

// run writes the folders and trains as the flags in args say, printing the
// results to out and progress to errOut.
func run(args []string, out, errOut io.Writer) error {
	flags := flag.NewFlagSet("imagefolder", flag.ContinueOnError)
	dir := flags.String("dir", "", "folder to write the images to and keep (new, empty or written by this example); empty: a temporary folder, removed at the end")
	perClass := flags.Int("train-per-class", 600, "training images per digit")
	valPerClass := flags.Int("val-per-class", 100, "validation images per digit (from MNIST's test set)")
	epochs := volt.EpochsFlag(flags, "epochs", 2, "training epochs")
	batch := flags.Int("batch", 64, "batch size")
	workers := flags.Int("workers", 2, "loader goroutines decoding and transforming images")
	seed := flags.Uint64("seed", 42, "seed for weights, shuffling and crops")
	root := flags.String("root", ".", "where volt_logs/ is written")
	progress := flags.Bool("progress", true, "show progress on stderr")
	shuffleLabels := flags.Bool("shuffle-labels", false, "a control: write each training image under a random digit (val_acc should fall to chance, 0.1)")
	flags.SetOutput(errOut)
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *perClass < 1 || *valPerClass < 1 {
		return fmt.Errorf("-train-per-class and -val-per-class must be >= 1, got %d and %d", *perClass, *valPerClass)
	}
	folder, cleanup, err := mnistfolder.Folder(*dir, "volt-imagefolder-")
	if err != nil {
		return err
	}
	defer cleanup()
	start := time.Now()
	n, err := mnistfolder.Write(folder, *perClass, *valPerClass, *shuffleLabels, *seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %d PNG images to %s in %.1fs\n", n, folder, time.Since(start).Seconds())

	norm := &data.Normalize{Mean: []float32{0.1307}, Std: []float32{0.3081}}
	train, err := data.OpenImageFolder(filepath.Join(folder, "train"), pad{Pixels: 2}, data.RandomCrop{Width: 28, Height: 28})
	if err != nil {
		return err
	}
	val, err := data.OpenImageFolder(filepath.Join(folder, "val"))
	if err != nil {
		return err
	}
	for _, f := range []*data.ImageFolder{train, val} {
		f.Grayscale, f.Normalize = true, norm
	}
	dm := volt.Loaders{
		Train: &data.DataLoader{Dataset: train, BatchSize: *batch, Shuffle: true, Workers: *workers},
		Val:   []data.Loader{&data.DataLoader{Dataset: val, BatchSize: *batch, Workers: *workers}},
	}

	volt.SeedEverything(*seed)
	cfg := volt.Config{MaxEpochs: *epochs, DefaultRootDir: *root, Log: slog.New(slog.NewTextHandler(errOut, nil)),
		EnableProgressBar: volt.Ptr(*progress)}
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
	start = time.Now()
	// digits.CNN reads [B, 784] or, as here, [B, 1, 28, 28]: one channel
	// first is the same memory as channels last.
	if err := trainer.Fit(ctx, &digits.CNN{LR: 1e-3}, dm); err != nil {
		return err
	}
	fmt.Fprintf(out, "trained %d epochs on %d images (%d classes) in %.1fs\n", *epochs, train.Len(), len(train.Classes), time.Since(start).Seconds())
	fmt.Fprintf(out, "val_acc=%.4f\n", trainer.CallbackMetrics()["val_acc"])
	return nil
}
