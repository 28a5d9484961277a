package parity_test

import (
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/examples/seqclass/classifier"
	"github.com/voltml/volt/optim"
	"github.com/voltml/volt/parity"
)

// TestSeqClassParity trains examples/seqclass's LSTM classifier (embedding
// 8, LSTM 16, 4 classes; tools/parity/seqclass.py's model) 50 steps from
// PyTorch's weights on PyTorch's batches: Adam with OneCycleLR stepped every
// batch and clipping by norm. Every step's loss matches PyTorch's within
// 1e-4 relative. The batches are the example's task: each label is
// classifier.Task.ClassOf its tokens, and Config.Params counts PyTorch's
// parameters.
func TestSeqClassParity(t *testing.T) {
	c := readCase(t, "seqclass_adam", "seqclass.py")
	task := classifier.Task{Length: 12, Marks: 2}
	x, err := c.file.Get("x")
	if err != nil {
		t.Fatal(err)
	}
	y, err := c.file.Get("y")
	if err != nil {
		t.Fatal(err)
	}
	tokens, classes := tensors.MustCopyFlatData[int32](x), tensors.MustCopyFlatData[int32](y)
	for i, class := range classes {
		got, err := task.ClassOf(tokens[i*task.Length : (i+1)*task.Length])
		if err != nil || got != int(class) {
			t.Fatalf("sequence %d: PyTorch's class %d, classifier.Task.ClassOf %d (%v)", i, class, got, err)
		}
	}
	m := &classifier.Module{
		Config: classifier.Config{Vocab: classifier.Vocab, Embed: 8, Hidden: 16, Classes: task.Classes()},
		Optimizers: volt.Optimizers{{Optimizer: optim.Adam(1e-2), Scheduler: optim.NewOneCycleLR(1e-2, 50),
			Interval: volt.IntervalStep}},
		Init: c.file.Apply,
	}
	// PyTorch's parameters, as the case file holds them, are the model's.
	size := 0
	for name, v := range c.file.ByName {
		if strings.HasPrefix(name, parity.ParamsPrefix+"/") {
			size += v.Shape().Size()
		}
	}
	if size != m.Params() {
		t.Errorf("Config.Params() = %d, PyTorch's parameters %d", m.Params(), size)
	}
	c.check(t, volt.Config{GradientClipVal: 1, GradientClipAlgorithm: volt.ClipNorm}, m)
}
