package main

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/examples/resnet/resnet"
)

// BenchmarkResNetTrainingStep times training batches of 64 synthetic
// 28×28 images through examples/resnet's network (one op = one batch; the
// first op also traces and compiles the step). For PyTorch's step on the
// same network, run examples/internal/speedtable -models resnet, which
// times both in paired rounds at the same thread count.
func BenchmarkResNetTrainingStep(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	examples := make(data.Slice, 64*b.N)
	for i := range examples {
		image := make([]float32, 784)
		for j := range image {
			image[j] = rng.Float32()
		}
		examples[i] = data.Example{Inputs: []data.Field{{Value: image}}, Labels: []data.Field{{Value: int32(i % 10)}}}
	}
	tr, err := volt.NewTrainer(volt.Config{MaxEpochs: 1, NumSanityValSteps: volt.Ptr(0), DisableLoggers: true,
		DisableCheckpointing: true, DisableModelSummary: true})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	if err := tr.Fit(context.Background(), resnet.New(), volt.Loaders{Train: &data.DataLoader{Dataset: examples, BatchSize: 64}}); err != nil {
		b.Fatal(err)
	}
}
