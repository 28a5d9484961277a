// Package rawloop is the baseline of bench/mnist_e2e.sh: the MNIST example's
// run written with GoMLX alone, no volt loop. It trains the same MLP
// (784-256-256-10, Adam 1e-3, batch 64) for one epoch on the first 55000
// training images, shuffled in the same order as volt's DataLoader (seed
// 42), validates on the last 5000 and tests on the 10000 test images, with
// batches built inline on the training goroutine by the dataset's GetBatch
// (no worker goroutines, no collation). Each training step runs one
// model.Exec of the whole step (forward, loss, accuracy, gradients, Adam
// update) and reads the loss back to the host.
//
// [Run] prints test_loss=… and test_acc=… on out, and on errOut the same
// timing line as the example's -timing flag. cmd/rawmnist runs it as a
// program of its own; the MNIST example built with -tags e2ebench runs it
// when VOLT_E2E_RAW=1, so that mnist_e2e.sh compares the two loops in one
// binary (the same raw loop in two binaries differed by 2-3% on the
// development machine, as much as the overhead being measured).
package rawloop

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/datasets/mnist"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/optim"
)

// processStart approximates the process start: package initialisation.
var processStart = time.Now()

const (
	batchSize = 64
	lr        = 1e-3
	seed      = 42
)

// Run trains, validates and tests, printing results to out and the timing
// line to errOut; args are its flags (-epochs, -cpuprofile).
func Run(args []string, out, errOut io.Writer) error {
	flags := flag.NewFlagSet("rawmnist", flag.ContinueOnError)
	cpuProfile := flags.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	epochs := flags.Int("epochs", 1, "epochs to train, each followed by validation, as the example's -epochs")
	maxSteps := flags.Int("max-steps", 0, "stop training after this many steps (0: none), as the example's -max-steps")
	flags.SetOutput(errOut)
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	trainSet, testSet, err := mnist.Load()
	if err != nil {
		return err
	}
	backend, err := engine.Backend("") // volt's default backend
	if err != nil {
		return err
	}
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(seed); err != nil {
		return err
	}
	opt := optim.Adam(lr)
	step, err := model.NewExec(backend, store, func(scope *model.Scope, in []*graph.Node) []*graph.Node {
		scope.SetTraining(in[0].Graph(), true) // as GoMLX's own train.Trainer does
		l, acc := lossAndAccuracy(scope, in[0], in[1])
		engine.MinimizeAll(store, opt, l)
		return []*graph.Node{l, acc}
	})
	if err != nil {
		return err
	}

	train := trainSet.Subset(0, 55000)
	var ends []time.Time
	for epoch := range *epochs {
		order := (&data.DataLoader{Dataset: train, BatchSize: batchSize, Shuffle: true, Seed: new(uint64(seed))}).Order(epoch)
		for start := 0; start < len(order) && (*maxSteps == 0 || len(ends) < *maxSteps); start += batchSize {
			b, err := train.GetBatch(order[start:min(start+batchSize, len(order))])
			if err != nil {
				return err
			}
			outs, err := step.Exec(b.Inputs[0], b.Labels[0])
			if err != nil {
				return err
			}
			if l := tensors.ToScalar[float32](outs[0]); l != l {
				return fmt.Errorf("loss is NaN at epoch %d, batch %d", epoch, start/batchSize)
			}
			ends = append(ends, time.Now())
		}
		if _, _, err := evaluate(backend, store, trainSet.Subset(55000, 60000)); err != nil {
			return err
		}
	}
	testLoss, testAcc, err := evaluate(backend, store, testSet)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "test_loss=%.4f\ntest_acc=%.4f\n", testLoss, testAcc)
	reportTiming(errOut, ends)
	return nil
}

// lossAndAccuracy returns the mean cross-entropy and the accuracy of the
// MLP on a batch, as the example's MLP computes them.
func lossAndAccuracy(scope *model.Scope, images, labels *graph.Node) (*graph.Node, *graph.Node) {
	x := images
	for i, width := range []int{256, 256} {
		x = activation.Relu(layers.DenseWithBias(scope.In("hidden_%d", i), x, width))
	}
	logits := layers.DenseWithBias(scope.In("output"), x, 10)
	labels = graph.ConvertDType(labels, dtypes.Int32)
	l := loss.SparseCategoricalCrossEntropyLogits([]*graph.Node{graph.ExpandAxes(labels, -1)}, []*graph.Node{logits})
	correct := graph.Equal(graph.ArgMax(logits, -1, dtypes.Int32), labels)
	return l, graph.ReduceAllMean(graph.ConvertDType(correct, logits.DType()))
}

// evaluate returns the mean loss and accuracy over ds (weighted by batch
// size), from a program traced now: GoMLX embeds the current weights of a
// graph not marked as training as constants.
func evaluate(backend compute.Backend, store *model.Store, ds *mnist.Dataset) (float64, float64, error) {
	exec, err := model.NewExec(backend, store, func(scope *model.Scope, in []*graph.Node) []*graph.Node {
		l, acc := lossAndAccuracy(scope, in[0], in[1])
		return []*graph.Node{l, acc}
	})
	if err != nil {
		return 0, 0, err
	}
	var sumLoss, sumAcc float64
	idx := make([]int, ds.Len())
	for i := range idx {
		idx[i] = i
	}
	for start := 0; start < len(idx); start += batchSize {
		b, err := ds.GetBatch(idx[start:min(start+batchSize, len(idx))])
		if err != nil {
			return 0, 0, err
		}
		outs, err := exec.Exec(b.Inputs[0], b.Labels[0])
		if err != nil {
			return 0, 0, err
		}
		n := float64(b.Size)
		sumLoss += n * float64(tensors.ToScalar[float32](outs[0]))
		sumAcc += n * float64(tensors.ToScalar[float32](outs[1]))
	}
	return sumLoss / float64(len(idx)), sumAcc / float64(len(idx)), nil
}

// reportTiming writes the example's -timing line from the ends of the
// training steps.
func reportTiming(w io.Writer, ends []time.Time) {
	steps := make([]float64, 0, len(ends))
	for i := 1; i < len(ends); i++ {
		steps = append(steps, ends[i].Sub(ends[i-1]).Seconds())
	}
	first, median := 0.0, 0.0
	if len(ends) > 0 {
		first = ends[0].Sub(processStart).Seconds()
	}
	if n := len(steps); n > 0 {
		slices.Sort(steps)
		median = (steps[(n-1)/2] + steps[n/2]) / 2
	}
	fmt.Fprintf(w, "timing: first_step_s=%.3f step_us=%.1f steps=%d wall_s=%.3f\n",
		first, median*1e6, len(steps), time.Since(processStart).Seconds())
}

// startCPUProfile starts a CPU profile into path and returns its stop.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
