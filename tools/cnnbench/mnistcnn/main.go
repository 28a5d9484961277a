// Command mnistcnn trains issue 16's CNN (internal/golower/cnn) on MNIST
// for a number of epochs on the pure-Go backend, with or without golower,
// and prints the wall time of each epoch and the test accuracy.
//
//	GOEXPERIMENT=simd go run ./tools/cnnbench/mnistcnn [-epochs 1] [-direct] [-limit N]
//
// MNIST is found as datasets/mnist finds it ($VOLT_MNIST_DIR, ...).
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/datasets/mnist"
	_ "github.com/voltml/volt/internal/convgrad" // GoMLX's convolution gradient, corrected for even kernels.
	"github.com/voltml/volt/internal/golower"
	"github.com/voltml/volt/internal/golower/cnn"
)

func main() {
	epochs := flag.Int("epochs", 1, "training epochs")
	direct := flag.Bool("direct", false, "use the Go backend's own convolutions (no golower)")
	limit := flag.Int("limit", 0, "train on the first N batches of each epoch only (0: all)")
	batch := flag.Int("batch", 64, "batch size")
	flag.Parse()
	if err := run(*epochs, *batch, *limit, *direct); err != nil {
		fmt.Fprintln(os.Stderr, "mnistcnn:", err)
		os.Exit(1)
	}
}

func run(epochs, batchSize, limit int, direct bool) error {
	if epochs < 1 || batchSize < 1 || limit < 0 {
		return fmt.Errorf("-epochs (%d) and -batch (%d) must be ≥ 1 and -limit (%d) ≥ 0", epochs, batchSize, limit)
	}
	train, test, err := mnist.Load()
	if err != nil {
		return err
	}
	var backend compute.Backend = gobackend.GetBackend()
	if !direct {
		backend = golower.Wrap(backend)
	}
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(42); err != nil {
		return err
	}
	trainer, err := cnn.NewTrainer(backend, store, 1e-3)
	if err != nil {
		return err
	}
	counter, err := cnn.NewCounter(backend, store)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(42, 1))
	fmt.Printf("backend %s (golower: %v), %d training examples, batch %d\n", backend, !direct, train.Len(), batchSize)
	for epoch := range epochs {
		order := rng.Perm(train.Len())
		start := time.Now()
		var loss float32
		steps := 0
		for from := 0; from+batchSize <= len(order) && (limit == 0 || steps < limit); from += batchSize {
			b, err := train.GetBatch(order[from : from+batchSize])
			if err != nil {
				return err
			}
			outs, err := trainer.Exec(b.Inputs[0], b.Labels[0])
			if err != nil {
				return err
			}
			loss = tensors.ToScalar[float32](outs[0])
			steps++
		}
		elapsed := time.Since(start)
		fmt.Printf("epoch %d: %d steps in %s (%.1f ms/step), last loss %.4f\n",
			epoch, steps, elapsed.Round(time.Millisecond), float64(elapsed.Milliseconds())/float64(steps), loss)
	}
	correct := 0
	for from := 0; from < test.Len(); from += 1000 {
		idx := make([]int, min(1000, test.Len()-from))
		for i := range idx {
			idx[i] = from + i
		}
		b, err := test.GetBatch(idx)
		if err != nil {
			return err
		}
		outs, err := counter.Exec(b.Inputs[0], b.Labels[0])
		if err != nil {
			return err
		}
		correct += int(tensors.ToScalar[int32](outs[0]))
	}
	fmt.Printf("test accuracy %.2f%% (%d/%d)\n", 100*float64(correct)/float64(test.Len()), correct, test.Len())
	return nil
}
