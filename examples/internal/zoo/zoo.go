// Package zoo lists volt's zoo models as examples/internal/speedtable
// and the core-count property test train them: each example's network,
// optimizer and batch, with synthetic data of its shape.
package zoo

import (
	"fmt"
	"math/rand/v2"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/examples/autoencoder/ae"
	"github.com/voltml/volt/examples/chargpt/gpt"
	"github.com/voltml/volt/examples/internal/digits"
	"github.com/voltml/volt/examples/resnet/resnet"
	"github.com/voltml/volt/examples/seqclass/classifier"
	"github.com/voltml/volt/optim"
)

// Model is one zoo model: volt's module and synthetic batches of its
// shape (examples/internal/speedtable's torch_models.py has the same
// network, optimizer and batch under the same name).
type Model struct {
	Name  string
	About string
	Batch int
	// Module returns a fresh module; Examples returns n synthetic examples.
	Module   func() volt.Module
	Examples func(n int, rng *rand.Rand) data.Slice
	ClipNorm float64 // gradient clipping by norm, 0: none
}

// chargptVocab is the vocabulary size both sides of the speed table use for the transformer
// (the size of examples/chargpt's corpus vocabulary).
const chargptVocab = 80

// Models are the zoo models, in the speed table's order.
var Models = []Model{
	{Name: "mlp", About: "examples/mnist: 784-256-256-10 ReLU MLP, Adam 1e-3, batch 64", Batch: 64,
		Module: func() volt.Module { return digits.NewMLP() }, Examples: images},
	{Name: "cnn", About: "examples/cnn: conv 3×3 32, pool, conv 3×3 64, pool, dense 128, 10; Adam 1e-3, batch 64", Batch: 64,
		Module: func() volt.Module { return &digits.CNN{LR: 1e-3} }, Examples: images},
	{Name: "resnet", About: "examples/resnet: stem 16 + BN, residual blocks 16/32/64 with BN, global average pool; Adam 1e-3, batch 64", Batch: 64,
		Module: func() volt.Module { return resnet.New() }, Examples: images},
	{Name: "chargpt", About: "examples/chargpt: nanoGPT CPU config (4 layers, 4 heads, width 128, block 64), AdamW, clip 1.0, batch 12", Batch: 12,
		Module: func() volt.Module {
			return &gpt.Module{Config: gpt.CPU(chargptVocab), Optimizers: volt.Optimizers{{
				Optimizer: optim.AdamW(1e-3).WithBetas(0.9, 0.99).WithWeightDecay(0.1),
				Groups:    []volt.ParamGroup{volt.NoWeightDecay(gpt.NoDecay...)}}}}
		},
		Examples: tokenWindows, ClipNorm: 1},
	{Name: "seqclass", About: "examples/seqclass: embedding 8, LSTM 32 over 32 tokens, dense 8; Adam 1e-2, clip 1.0, batch 32", Batch: 32,
		Module: func() volt.Module {
			return &classifier.Module{Config: seqclassConfig,
				Optimizers: volt.Optimize(optim.Adam(1e-2))}
		},
		Examples: orderSequences, ClipNorm: 1},
	{Name: "autoencoder", About: "examples/autoencoder: dense 784-256-32-256-784, ReLU, sigmoid, MSE; Adam 1e-3, batch 64", Batch: 64,
		Module: func() volt.Module { return ae.New() }, Examples: images},
}

// seqclassTask and seqclassConfig are examples/seqclass's defaults (the
// sizes torch_models.py's seqclass uses).
var (
	seqclassTask   = classifier.Task{Length: 32, Marks: 3}
	seqclassConfig = classifier.Config{Vocab: classifier.Vocab, Embed: 8, Hidden: 32, Classes: seqclassTask.Classes()}
)

// Named returns the model called name.
func Named(name string) (Model, error) {
	for _, m := range Models {
		if m.Name == name {
			return m, nil
		}
	}
	names := make([]string, len(Models))
	for i, m := range Models {
		names[i] = m.Name
	}
	return Model{}, fmt.Errorf("no model %q; the models are %v", name, names)
}

// images returns n 28×28 images of uniform pixels with uniform labels.
func images(n int, rng *rand.Rand) data.Slice {
	out := make(data.Slice, n)
	for i := range out {
		image := make([]float32, 784)
		for j := range image {
			image[j] = rng.Float32()
		}
		out[i] = data.Example{Inputs: []data.Field{{Value: image}}, Labels: []data.Field{{Value: int32(rng.IntN(10))}}}
	}
	return out
}

// orderSequences returns n sequences of examples/seqclass's temporal-order
// task (its own generator, seeded from rng).
func orderSequences(n int, rng *rand.Rand) data.Slice {
	examples, err := seqclassTask.Generate(n, rng.Uint64())
	if err != nil {
		panic(err) // seqclassTask is valid
	}
	return examples
}

// tokenWindows returns n windows of 64 uniform tokens and their next tokens.
func tokenWindows(n int, rng *rand.Rand) data.Slice {
	block := gpt.CPU(chargptVocab).Block
	out := make(data.Slice, n)
	for i := range out {
		seq := make([]int32, block+1)
		for j := range seq {
			seq[j] = int32(rng.IntN(chargptVocab))
		}
		out[i] = data.Example{
			Inputs: []data.Field{{Value: seq[:block], Shape: []int{block}}},
			Labels: []data.Field{{Value: seq[1:], Shape: []int{block}}},
		}
	}
	return out
}
