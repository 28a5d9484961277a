// Command mnist trains a 784-256-256-10 MLP on MNIST with volt: Adam 1e-3,
// batch 64, validation on the last 5000 training images after each epoch, and
// a test run at the end whose accuracy is the last line printed.
//
//	GOEXPERIMENT=simd go run ./examples/mnist -epochs 3
//
// -timing prints, last on stderr, a line of timings that bench/mnist_e2e.sh
// reads: from the process start to the end of the first training step, the
// median training step and the wall time.
//
// -devices 2 trains data-parallel on 2 MPI ranks (each reads half of every
// epoch, gradients are averaged across them): build with -tags mpi, and the
// program runs itself again under mpirun.
//
//	GOEXPERIMENT=simd go build -tags mpi -o mnist ./examples/mnist && ./mnist -devices 2
//
// Progress goes to stderr through callback.ProgressBar: bars on a terminal
// (an epoch's training bar with a validation bar below it, then a test bar),
// plain lines elsewhere (one per epoch, and one every -progress-every
// optimization steps). -progress=false turns it off; the epochs are then
// summed up in a line each on stdout. Stdout ends with test_loss=… and
// test_acc=… test_f1=… in every case (accuracy and macro F1 of the whole test
// set, from volt/metrics), after the test set's confusion matrix.
package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/voltml/volt/examples/internal/cmdexit"
	"github.com/voltml/volt/examples/internal/digits"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
)

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if ferr := volt.FinalizeDistributed(); err == nil {
		err = ferr
	}
	cmdexit.Exit("mnist", err)
}

// run trains and tests the model as the flags in args say, printing results
// to out and progress and logs to errOut.
func run(args []string, out, errOut io.Writer) error {
	flags := flag.NewFlagSet("mnist", flag.ContinueOnError)
	epochs := volt.EpochsFlag(flags, "epochs", 3, "training epochs")
	batch := flags.Int("batch", 64, "batch size")
	lr := flags.Float64("lr", 1e-3, "Adam learning rate")
	workers := flags.Int("workers", 2, "goroutines preparing batches")
	seed := flags.Uint64("seed", 42, "seed for weights and shuffling")
	root := flags.String("root", ".", "where volt_logs/ is written")
	maxSteps := flags.Int64("max-steps", 0, "stop after this many optimization steps (0: no limit)")
	valEvery := flags.Int("val-every", 0, "validate every n training batches (0: after each epoch)")
	progress := flags.Bool("progress", true, "show progress on stderr (bars on a terminal, plain lines elsewhere)")
	refresh := flags.Duration("refresh", callback.DefaultRefreshInterval, "least time between two redraws of a progress bar")
	every := flags.Int("progress-every", 0, "when stderr is not a terminal, also write a line every n steps (0: epoch lines only)")
	cpuProfile := flags.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	devices := flags.Int("devices", 0, "data-parallel ranks (Config.Devices): N > 1 runs this program again under mpirun -np N (build with -tags mpi)")
	profile := flags.String("profiler", "", `volt's profiler for each run: "simple", "advanced" or "trace" (files in the log directory)`)
	timing := flags.Bool("timing", false, "print to stderr, at the end, the time from the process start to the first training step, the median step time and the wall time")
	flags.SetOutput(errOut)
	if err := flags.Parse(args); err != nil {
		return err
	}

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	volt.SeedEverything(*seed)
	dm, err := digits.Loaders(*batch, *workers)
	if err != nil {
		return err
	}

	var callbacks []volt.Callback
	if *progress {
		bar := callback.NewProgressBar(callback.ProgressBarConfig{Writer: errOut, RefreshInterval: *refresh, Every: *every})
		callbacks = append(callbacks, bar)
	} else {
		callbacks = append(callbacks, epochPrinter{out})
	}
	var clock *stepClock
	if *timing {
		clock = &stepClock{}
		callbacks = append(callbacks, clock)
	}
	var valInterval volt.ValInterval
	if *valEvery > 0 {
		valInterval = volt.Batches(*valEvery)
	}
	trainer, err := volt.NewTrainer(volt.Config{
		MaxEpochs:        *epochs,
		Devices:          *devices,
		MaxSteps:         *maxSteps,
		ValCheckInterval: valInterval,
		DefaultRootDir:   *root,
		Callbacks:        callbacks,
		Profiler:         *profile,
		// volt's own progress bar is the one above, or none.
		EnableProgressBar: volt.Ptr(*progress),
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	model := &digits.MLP{Hidden: []int{256, 256}, LR: *lr}
	if err := trainer.Fit(ctx, model, dm); err != nil {
		return err
	}
	results, err := trainer.Test(ctx, model, dm)
	if err != nil {
		return err
	}
	if !trainer.IsGlobalZero() {
		return nil // rank 0 reports; the test metrics are reduced across ranks
	}
	confmat, err := trainer.MetricValue("test_confmat")
	if err != nil {
		return err
	}
	printConfusion(out, confmat)
	fmt.Fprintf(out, "test_loss=%.4f\n", results[0]["test_loss"])
	fmt.Fprintf(out, "test_acc=%.4f test_f1=%.4f\n", results[0]["test_acc"], results[0]["test_f1"])
	if clock != nil {
		clock.report(errOut, trainer.DistributedStats())
	}
	return nil
}

// epochPrinter prints one line per epoch with the epoch's metrics, in place
// of the progress bar when -progress=false.
type epochPrinter struct{ out io.Writer }

// OnTrainEpochEnd implements volt.OnTrainEpochEnd.
func (p epochPrinter) OnTrainEpochEnd(t *volt.Trainer) error {
	if !t.IsGlobalZero() {
		return nil
	}
	m := t.CallbackMetrics()
	line := fmt.Sprintf("epoch %d: step %d", t.CurrentEpoch(), t.GlobalStep())
	// Only what was logged: no validation has run yet when MaxSteps ends
	// the first epoch early.
	for _, name := range []string{"train_loss", "train_acc_epoch", "val_loss", "val_acc", "val_f1"} {
		if v, ok := m[name]; ok {
			line += fmt.Sprintf(" %s=%.4f", strings.TrimSuffix(name, "_epoch"), v)
		}
	}
	fmt.Fprintln(p.out, line)
	return nil
}

var _ volt.OnTrainEpochEnd = epochPrinter{}
