package parity_test

import (
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/examples/chargpt/gpt"
	"github.com/voltml/volt/optim"
	"github.com/voltml/volt/parity"
)

// TestCharGPTParity trains examples/chargpt's transformer (2 layers, 2
// heads, width 32, block 16; tools/parity/chargpt.py's nanoGPT model) 50
// steps from PyTorch's weights on PyTorch's batches: AdamW with the no-decay
// group on biases and norms, clipping, a per-step cosine schedule. Every
// step's loss matches PyTorch's within 1e-4 relative.
func TestCharGPTParity(t *testing.T) {
	file, err := parity.Read(filepath.Join("testdata", "chargpt_adamw.safetensors"))
	if err != nil {
		t.Fatalf("%v (regenerate with /usr/bin/python3 tools/parity/chargpt.py)", err)
	}
	want, err := file.Float64s("loss")
	if err != nil {
		t.Fatal(err)
	}
	examples, err := file.Examples([]string{"x"}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	wte, err := file.Get(parity.ParamsPrefix + "/gpt/wte/embeddings")
	if err != nil {
		t.Fatal(err)
	}
	losses := &parity.Losses{}
	tr, err := volt.NewTrainer(volt.Config{
		MaxEpochs: 1, GradientClipVal: 1, GradientClipAlgorithm: volt.ClipNorm,
		Callbacks:      []volt.Callback{losses},
		DisableLoggers: true, DisableModelSummary: true, Log: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	m := &gpt.Module{
		Config: gpt.Config{Vocab: wte.Shape().Dim(0), Block: 16, Layers: 2, Heads: 2, Width: 32},
		Optimizers: volt.Optimizers{{Optimizer: optim.AdamW(3e-3).WithBetas(0.9, 0.99).WithWeightDecay(0.1),
			Groups:    []volt.ParamGroup{volt.NoWeightDecay(gpt.NoDecay...)},
			Scheduler: must(optim.NewCosineAnnealingLR(50, 1e-4)), Interval: volt.IntervalStep}},
		Init: file.Apply,
	}
	if err := tr.Fit(t.Context(), m, volt.Loaders{Train: &data.DataLoader{Dataset: examples, BatchSize: len(examples) / len(want)}}); err != nil {
		t.Fatal(err)
	}
	bad, maxRel, err := parity.Compare(losses.Values, want, 1e-4)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range bad {
		t.Error(m)
	}
	t.Logf("%d steps, loss %.6f -> %.6f, largest relative difference %.3g", len(want), want[0], want[len(want)-1], maxRel)
}
