package golower

import (
	"testing"
	"time"

	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/voltml/volt/internal/gokernels"
)

// cnnVariant is one configuration of the wrapper for BenchmarkCNNPaired.
type cnnVariant struct {
	name      string
	rules     Rules
	lowering  Lowering
	noKernels bool // internal/gokernels off while it builds and runs
}

// cnnPairs are the before/after pairs of BenchmarkCNNPaired, one per
// lowering that targets the CNN's step.
var cnnPairs = []struct {
	name          string
	before, after cnnVariant
}{
	// The second convolution (13×13 input, 11×11 output: padded grid
	// 1.40× the output) on shifted runs, past DefaultMaxShiftWaste.
	{"conv2-shift", cnnVariant{"before", DefaultRules(), Lowering{}, false},
		cnnVariant{"after", DefaultRules(), Lowering{MaxShiftWaste: 1.5}, false}},
	// Pooling one windowed axis at a time (pool_axes.go), gradient of
	// 2-windows from their halves.
	{"pool", cnnVariant{"before", DefaultRules(), Lowering{WholeWindowPooling: true}, false},
		cnnVariant{"after", DefaultRules(), Lowering{}, false}},
	// The second convolution's input gradient (full-padded) multiplied
	// first, its shifted products summed (scatter.go).
	{"conv2-scatter", cnnVariant{"before", DefaultRules(), Lowering{NoScatterConvs: true}, false},
		cnnVariant{"after", DefaultRules(), Lowering{}, false}},
	// The gradient of 2-windows from their two halves, not ArgMinMax.
	{"pool-pairs", cnnVariant{"before", DefaultRules(), Lowering{PoolArgMinMax: true}, false},
		cnnVariant{"after", DefaultRules(), Lowering{}, false}},
	// The first convolution (9 patch rows, 32 output channels) multiplied
	// with its patches transposed, not its product
	// (shiftPatchesTransposedProduct in split.go).
	{"transposed-product", cnnVariant{"before", DefaultRules(), Lowering{NoTransposedProducts: true}, false},
		cnnVariant{"after", DefaultRules(), Lowering{}, false}},
	// internal/gokernels' Transpose, Pad and Slice instead of the
	// backend's own.
	{"copy-kernels", cnnVariant{"before", DefaultRules(), Lowering{}, true},
		cnnVariant{"after", DefaultRules(), Lowering{}, false}},
	// Max-pooling and its gradient on internal/gokernels' AVX-512 kernels
	// (gokernels.RunsPooling) instead of lowered.
	{"pool-kernels", cnnVariant{"before", DefaultRules(), Lowering{}, false},
		cnnVariant{"after", DefaultRules(), Lowering{PoolKernel: gokernels.RunsPooling}, false}},
	// The convolutions and their gradients on oneDNN (gokernels.RunsConv)
	// instead of lowered.
	{"onednn", cnnVariant{"before", DefaultRules(), Lowering{}, false},
		cnnVariant{"after", DefaultRules(), Lowering{ConvKernel: gokernels.RunsConv}, false}},
}

// BenchmarkCNNPaired times the CNN's training step (as BenchmarkCNNStep)
// under two wrapper configurations, alternating one step of each per
// iteration so that both see the same machine load; it reports each
// one's CPU and wall time per step and the after/before CPU ratio.
func BenchmarkCNNPaired(b *testing.B) {
	for _, pair := range cnnPairs {
		b.Run(pair.name, func(b *testing.B) {
			pairedSteps(b, []cnnVariant{pair.before, pair.after},
				func(v cnnVariant) (*model.Exec, error) {
					return cnnTrainer(WrapWith(gobackend.GetBackend(), v.rules, v.lowering))
				},
				func() (images, labels *tensors.Tensor) { return cnnBatchTensors(cnnSeed) })
		})
	}
}

// pairedSteps times the training step newTrainer makes for each variant,
// alternating one step of each per iteration after cnnWarmup untimed ones,
// each on its own batch from newBatch (a tensor is bound to the backend
// that first used it), and reports each one's CPU and wall time per step
// and the after/before ratios (variants[1] over variants[0]).
func pairedSteps(b *testing.B, variants []cnnVariant, newTrainer func(cnnVariant) (*model.Exec, error),
	newBatch func() (images, labels *tensors.Tensor)) {
	defer gokernels.SetEnabled(gokernels.SetEnabled(true))
	execs := make([]*model.Exec, len(variants))
	type batch struct{ images, labels *tensors.Tensor }
	batches := make([]batch, len(variants))
	for i, v := range variants {
		gokernels.SetEnabled(!v.noKernels)
		exec, err := newTrainer(v)
		if err != nil {
			b.Fatal(err)
		}
		execs[i] = exec
		batches[i].images, batches[i].labels = newBatch()
	}
	step := func(i int) {
		gokernels.SetEnabled(!variants[i].noKernels)
		outs, err := execs[i].Exec(batches[i].images, batches[i].labels)
		if err != nil {
			b.Fatal(err)
		}
		tensors.ToScalar[float32](outs[0])
	}
	for i := range execs {
		for range cnnWarmup {
			step(i)
		}
	}
	cpu := make([]time.Duration, len(execs))
	wall := make([]time.Duration, len(execs))
	for b.Loop() {
		for i := range execs {
			c0, w0 := processCPUTime(b), time.Now()
			step(i)
			cpu[i] += processCPUTime(b) - c0
			wall[i] += time.Since(w0)
		}
	}
	for i, v := range variants {
		b.ReportMetric(float64(cpu[i].Nanoseconds())/float64(b.N), "cpu-ns/step-"+v.name)
		b.ReportMetric(float64(wall[i].Nanoseconds())/float64(b.N), "ns/step-"+v.name)
	}
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "cpu-after/before")
	b.ReportMetric(float64(wall[1])/float64(wall[0]), "wall-after/before")
}
