package main

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

// benchModel is one zoo model as both sides train it: volt's module and
// synthetic batches of its shape here, the same network, optimizer and
// batch in torch_models.py under the same name.
type benchModel struct {
	name  string
	about string
	batch int
	// module returns a fresh module; examples returns n synthetic examples.
	module   func() volt.Module
	examples func(n int, rng *rand.Rand) data.Slice
	clipNorm float64 // gradient clipping by norm, 0: none
}

// chargptVocab is the vocabulary size both sides use for the transformer
// (the size of examples/chargpt's corpus vocabulary).
const chargptVocab = 80

var models = []benchModel{
	{name: "mlp", about: "examples/mnist: 784-256-256-10 ReLU MLP, Adam 1e-3, batch 64", batch: 64,
		module: func() volt.Module { return digits.NewMLP() }, examples: images},
	{name: "cnn", about: "examples/cnn: conv 3×3 32, pool, conv 3×3 64, pool, dense 128, 10; Adam 1e-3, batch 64", batch: 64,
		module: func() volt.Module { return &digits.CNN{LR: 1e-3} }, examples: images},
	{name: "resnet", about: "examples/resnet: stem 16 + BN, residual blocks 16/32/64 with BN, global average pool; Adam 1e-3, batch 64", batch: 64,
		module: func() volt.Module { return resnet.New() }, examples: images},
	{name: "chargpt", about: "examples/chargpt: nanoGPT CPU config (4 layers, 4 heads, width 128, block 64), AdamW, clip 1.0, batch 12", batch: 12,
		module: func() volt.Module {
			return &gpt.Module{Config: gpt.CPU(chargptVocab), Optimizers: volt.Optimizers{{
				Optimizer: optim.AdamW(1e-3).WithBetas(0.9, 0.99).WithWeightDecay(0.1),
				Groups:    []volt.ParamGroup{volt.NoWeightDecay(gpt.NoDecay...)}}}}
		},
		examples: tokenWindows, clipNorm: 1},
	{name: "seqclass", about: "examples/seqclass: embedding 8, LSTM 32 over 32 tokens, dense 8; Adam 1e-2, clip 1.0, batch 32", batch: 32,
		module: func() volt.Module {
			return &classifier.Module{Config: seqclassConfig,
				Optimizers: volt.Optimize(optim.Adam(1e-2))}
		},
		examples: orderSequences, clipNorm: 1},
	{name: "autoencoder", about: "examples/autoencoder: dense 784-256-32-256-784, ReLU, sigmoid, MSE; Adam 1e-3, batch 64", batch: 64,
		module: func() volt.Module { return ae.New() }, examples: images},
}

// seqclassTask and seqclassConfig are examples/seqclass's defaults (the
// sizes torch_models.py's seqclass uses).
var (
	seqclassTask   = classifier.Task{Length: 32, Marks: 3}
	seqclassConfig = classifier.Config{Vocab: classifier.Vocab, Embed: 8, Hidden: 32, Classes: seqclassTask.Classes()}
)

// modelNamed returns the model called name.
func modelNamed(name string) (benchModel, error) {
	for _, m := range models {
		if m.name == name {
			return m, nil
		}
	}
	names := make([]string, len(models))
	for i, m := range models {
		names[i] = m.name
	}
	return benchModel{}, fmt.Errorf("no model %q; the models are %v", name, names)
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
