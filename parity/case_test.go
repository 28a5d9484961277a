package parity_test

import (
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/parity"
)

// parityCase is a committed case file (testdata/<name>.safetensors) read
// for a test: PyTorch's per-step losses and the batches it trained on.
type parityCase struct {
	file     *parity.Tensors
	want     []float64
	examples data.Slice
}

// readCase reads testdata/<name>.safetensors, which script writes, with
// the batches' inputs in tensor "x" and their labels in "y".
func readCase(t *testing.T, name, script string) parityCase {
	t.Helper()
	return readCaseFields(t, name, script, []string{"x"}, []string{"y"})
}

// readCaseFields is readCase with the batches' inputs and labels in the
// named tensors (no labels: nil).
func readCaseFields(t *testing.T, name, script string, inputs, labels []string) parityCase {
	t.Helper()
	file, err := parity.Read(filepath.Join("testdata", name+".safetensors"))
	if err != nil {
		t.Fatalf("%v (regenerate with /usr/bin/python3 tools/parity/%s)", err, script)
	}
	want, err := file.Float64s("loss")
	if err != nil {
		t.Fatal(err)
	}
	examples, err := file.Examples(inputs, labels)
	if err != nil {
		t.Fatal(err)
	}
	return parityCase{file: file, want: want, examples: examples}
}

// train fits m one epoch over the case's batches (one per PyTorch step)
// under cfg, quiet, and returns the loss of every step.
func (c parityCase) train(t *testing.T, cfg volt.Config, m volt.Module) []float64 {
	t.Helper()
	_, losses := c.fit(t, cfg, m, nil)
	return losses
}

// fit is train with val, when not nil, as the validation loader (run after
// the epoch's steps), and returns the trainer too.
func (c parityCase) fit(t *testing.T, cfg volt.Config, m volt.Module, val data.Loader) (*volt.Trainer, []float64) {
	t.Helper()
	losses := &parity.Losses{}
	cfg.MaxEpochs = 1
	cfg.Callbacks = append(cfg.Callbacks, losses)
	cfg.DisableLoggers, cfg.DisableModelSummary, cfg.Log = true, true, slog.New(slog.DiscardHandler)
	cfg.EnableProgressBar = volt.Ptr(false)
	tr, err := volt.NewTrainer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	batch := len(c.examples) / len(c.want)
	loaders := volt.Loaders{Train: &data.DataLoader{Dataset: c.examples, BatchSize: batch}}
	if val != nil {
		loaders.Val = []data.Loader{val}
	}
	if err := tr.Fit(t.Context(), m, loaders); err != nil {
		t.Fatal(err)
	}
	return tr, losses.Values
}

// compare reports every step whose loss is not PyTorch's within 1e-4
// relative and returns the largest relative difference.
func (c parityCase) compare(t *testing.T, got []float64) float64 {
	t.Helper()
	bad, maxRel, err := parity.Compare(got, c.want, 1e-4)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range bad {
		t.Error(m)
	}
	t.Logf("%d steps, loss %.6f -> %.6f, largest relative difference %.3g", len(c.want), c.want[0], c.want[len(c.want)-1], maxRel)
	return maxRel
}
