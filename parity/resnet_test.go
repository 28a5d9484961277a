package parity_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/examples/resnet/resnet"
	"github.com/voltml/volt/optim"
)

// TestResNetParity trains examples/resnet's network (package
// examples/resnet/resnet, its default config; tools/parity/resnet.py's
// PyTorch model) 50 steps from PyTorch's weights on PyTorch's batches, with
// batch normalization in training mode: SGD with momentum and weight decay,
// clipping by norm and a per-step MultiStepLR. Every step's loss matches
// PyTorch's within 1e-4 relative; after the 50 steps every BatchNorm2d's
// running_mean and running_var match PyTorch's buffers within 1e-4 and
// num_batches_tracked is 50; the weights match PyTorch's (compareTrained);
// and the validation loss of one batch, which
// normalises with the running statistics, matches PyTorch's eval-mode loss
// within 1e-4 relative.
func TestResNetParity(t *testing.T) {
	c := readCase(t, "resnet_sgd", "resnet.py")
	evalExamples, err := c.file.Examples([]string{"eval_x"}, []string{"eval_y"})
	if err != nil {
		t.Fatal(err)
	}
	m := resnet.New()
	m.Init = c.file.Apply
	m.Optimizers = volt.Optimizers{{Optimizer: optim.SGD(0.01).WithMomentum(0.9).WithWeightDecay(5e-4),
		Scheduler: optim.NewMultiStepLR([]int{25, 40}, 0.2), Interval: volt.IntervalStep}}
	cfg := volt.Config{GradientClipVal: 2, GradientClipAlgorithm: volt.ClipNorm, NumSanityValSteps: volt.Ptr(0)}
	tr, got := c.fit(t, cfg, m, &data.DataLoader{Dataset: evalExamples, BatchSize: len(evalExamples)})
	c.compare(t, got)
	c.compareTrained(t, tr, trainedRel)

	// The running statistics PyTorch's BatchNorm2d layers hold after the steps.
	counters := func(path string) bool { return path == "/eval_loss" || strings.HasSuffix(path, "num_batches_tracked") }
	worst, at := c.compareVariables(t, tr, "after", 1e-4, 1e-2, counters)
	t.Logf("running statistics: largest relative difference %.3g, at %s", worst, at)
	for name := range c.file.ByName {
		path, ok := strings.CutPrefix(name, "after")
		if !ok || !strings.HasSuffix(path, "num_batches_tracked") {
			continue
		}
		v := tr.Store().GetVariable(path)
		if v == nil {
			t.Errorf("volt's model has no variable %s (PyTorch's %s)", path, name)
		} else if n := tensors.ToScalar[int64](v.MustValue()); n != int64(len(c.want)) {
			t.Errorf("%s is %d after %d steps", path, n, len(c.want))
		}
	}

	// An evaluation graph normalises with them.
	wantEval, err := c.file.Float64s("after/eval_loss")
	if err != nil {
		t.Fatal(err)
	}
	gotEval := tr.CallbackMetrics()["val_loss"]
	if r := math.Abs(gotEval-wantEval[0]) / wantEval[0]; r > 1e-4 {
		t.Errorf("evaluation-mode loss after training: volt %.7g, PyTorch %.7g (relative %.3g)", gotEval, wantEval[0], r)
	} else {
		t.Logf("evaluation-mode loss %.6f, PyTorch's %.6f (relative %.3g)", gotEval, wantEval[0], r)
	}
}
