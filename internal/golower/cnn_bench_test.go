package golower

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/internal/golower/cnn"
)

// The CNN of issue 16 (package cnn), on MNIST-shaped batches of 64.
const (
	cnnBatch  = 64
	cnnSeed   = 42
	cnnLR     = 1e-3
	cnnWarmup = 2 // untimed steps: the first compiles
)

// cnnTrainer compiles the CNN's Adam training step on backend.
func cnnTrainer(backend compute.Backend) (*model.Exec, error) {
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(cnnSeed); err != nil {
		return nil, err
	}
	return cnn.NewTrainer(backend, store, cnnLR)
}

// cnnBatchTensors returns one MNIST-shaped batch: uniform pixels, uniform
// labels.
func cnnBatchTensors(seed uint64) (images, labels *tensors.Tensor) {
	r := rand.New(rand.NewPCG(seed, 1))
	pixels := make([]float32, cnnBatch*cnn.ImageSize*cnn.ImageSize)
	for i := range pixels {
		pixels[i] = r.Float32()
	}
	classes := make([]int32, cnnBatch)
	for i := range classes {
		classes[i] = int32(r.IntN(10))
	}
	return tensors.FromFlatDataAndDimensions(pixels, cnnBatch, cnn.ImageSize, cnn.ImageSize, 1),
		tensors.FromFlatDataAndDimensions(classes, cnnBatch)
}

// BenchmarkCNNStep times one training step of the CNN per
// iteration, on the Go backend as is (direct) and wrapped by golower.
func BenchmarkCNNStep(b *testing.B) {
	for _, bc := range []struct {
		name    string
		backend func() compute.Backend
	}{
		{"backend=direct", gobackend.GetBackend},
		{"backend=golower", func() compute.Backend { return Wrap(gobackend.GetBackend()) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			exec, err := cnnTrainer(bc.backend())
			if err != nil {
				b.Fatal(err)
			}
			images, labels := cnnBatchTensors(cnnSeed)
			step := func() float32 {
				outs, err := exec.Exec(images, labels)
				if err != nil {
					b.Fatal(err)
				}
				return tensors.ToScalar[float32](outs[0])
			}
			for range cnnWarmup {
				step()
			}
			cpuBefore := processCPUTime(b)
			for b.Loop() {
				step()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/step")
			// CPU time (user+system, all threads) per step: on a loaded
			// machine it varies less than the wall time.
			b.ReportMetric(float64((processCPUTime(b)-cpuBefore).Nanoseconds())/float64(b.N), "cpu-ns/step")
		})
	}
}

// processCPUTime returns the user and system CPU time of this process.
func processCPUTime(b testing.TB) time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		b.Fatal(err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}
