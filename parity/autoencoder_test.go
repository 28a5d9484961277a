package parity_test

import (
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/examples/autoencoder/ae"
	"github.com/voltml/volt/optim"
)

// TestAutoencoderParity trains examples/autoencoder's network (package
// examples/autoencoder/ae in tools/parity/autoencoder.py's small config:
// 64 → 32 → 8 → 32 → 64, sigmoid output, mean squared error of the
// reconstruction) 50 steps from PyTorch's weights on PyTorch's batches,
// which have no labels: Adam, clipping by norm and a per-step OneCycleLR
// (PyTorch's with cycle_momentum=False). Every step's loss matches
// PyTorch's within 1e-4 relative.
func TestAutoencoderParity(t *testing.T) {
	c := readCaseFields(t, "autoencoder_adam", "autoencoder.py", []string{"x"}, nil)
	m := &ae.Autoencoder{Hidden: 32, Code: 8, Init: c.file.Apply,
		Optimizers: volt.Optimizers{{Optimizer: optim.Adam(1e-2), Scheduler: optim.NewOneCycleLR(1e-2, 50),
			Interval: volt.IntervalStep}}}
	c.check(t, volt.Config{GradientClipVal: 1, GradientClipAlgorithm: volt.ClipNorm}, m)
}
