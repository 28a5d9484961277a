package torchvision_test

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/internal/testenv"
	"github.com/voltml/volt/nn"
	"github.com/voltml/volt/statedict"
	"github.com/voltml/volt/torchvision"
)

// torchvisionFiles runs testdata/resnet18.py into a temporary directory
// and reads what it wrote: torchvision's ResNet-18 state dict and the
// goldens. It skips (fails under VOLT_REQUIRE_TOOLS=1) without Debian's
// python3-torchvision.
func torchvisionFiles(t *testing.T) (weights, golden *statedict.StateDict) {
	t.Helper()
	const py = "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil || exec.Command(py, "-c", "import torchvision").Run() != nil {
		testenv.Missing(t, "no /usr/bin/python3 with torchvision", "apt-get install python3-torchvision")
	}
	dir := t.TempDir()
	if b, err := exec.Command(py, "testdata/resnet18.py", dir).CombinedOutput(); err != nil {
		t.Fatalf("resnet18.py: %v\n%s", err, b)
	}
	var err error
	if weights, err = statedict.Read(filepath.Join(dir, "resnet18.pt")); err != nil {
		t.Fatal(err)
	}
	if golden, err = statedict.Read(filepath.Join(dir, "golden.pt")); err != nil {
		t.Fatal(err)
	}
	return weights, golden
}

// maxAbsDiff is the largest |got − want| of two float32 tensors of equal size.
func maxAbsDiff(t *testing.T, what string, got, want *tensors.Tensor) float64 {
	t.Helper()
	g, w := tensors.MustCopyFlatData[float32](got), tensors.MustCopyFlatData[float32](want)
	if len(g) != len(w) {
		t.Fatalf("%s: %s, torch's %s", what, got.Shape(), want.Shape())
	}
	d := 0.0
	for i := range g {
		d = math.Max(d, math.Abs(float64(g[i])-float64(w[i])))
	}
	return d
}

// TestResNet18AsTorchvision: torchvision's ResNet-18 state dict (written
// by python3-torchvision 0.14, read from its torch.save zip in Go) loads
// strictly into torchvision.ResNet18, and on the same input: the eval-mode
// logits are torchvision's within 1e-5; in train mode the logits (batch
// statistics), a batch norm's updated running mean and the gradients of
// the cross-entropy loss with respect to fc.weight and conv1.weight are
// torch's within float32 tolerance.
func TestResNet18AsTorchvision(t *testing.T) {
	weights, golden := torchvisionFiles(t)
	be, err := engine.Backend("") // volt's: GoMLX's Go backend, with batch norms and convolutions lowered
	if err != nil {
		t.Fatal(err)
	}
	store := model.NewStore()
	forward := func(scope *model.Scope, x *graph.Node) *graph.Node {
		defer weights.Apply(scope)
		return torchvision.ResNet18(scope, x, 10)
	}
	eval, err := model.NewExec1(be, store, forward)
	if err != nil {
		t.Fatal(err)
	}
	logits, err := eval.Call(golden.Get("input"))
	if err != nil {
		t.Fatal(err)
	}
	d := maxAbsDiff(t, "eval logits", logits, golden.Get("eval_logits"))
	t.Logf("eval logits: max |Δ| %.2g (logits up to %.3g)", d, maxAbs(golden.Get("eval_logits")))
	if d > 1e-5 {
		t.Errorf("eval logits differ from torchvision's by %.3g > 1e-5", d)
	}

	train, err := model.NewExec(be, store, func(scope *model.Scope, x *graph.Node) []*graph.Node {
		scope.SetTraining(x.Graph(), true)
		logits := forward(scope, x)
		loss := nn.CrossEntropyLoss(logits, graph.Const(x.Graph(), []int64{1, 3}))
		grads := graph.Gradient(loss, scope.Store().GetVariable("/fc/weight").NodeValue(x.Graph()),
			scope.Store().GetVariable("/conv1/weight").NodeValue(x.Graph()))
		return append([]*graph.Node{logits, loss}, grads...)
	})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := train.Call(golden.Get("input"))
	if err != nil {
		t.Fatal(err)
	}
	runningMean, err := store.GetVariable("/layer1/0/bn1/running_mean").Value()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		got  *tensors.Tensor
		want string
		tol  float64
	}{
		{"train logits", outs[0], "train_logits", 1e-5},
		{"loss", outs[1], "loss", 1e-5},
		{"layer1.0.bn1.running_mean", runningMean, "train_running_mean", 1e-6},
		{"grad fc.weight", outs[2], "grad_fc_weight", 1e-5},
		{"grad conv1.weight", outs[3], "grad_conv1_weight", 1e-5},
	} {
		d := maxAbsDiff(t, c.what, c.got, golden.Get(c.want))
		t.Logf("%s: max |Δ| %.2g (values up to %.3g)", c.what, d, maxAbs(golden.Get(c.want)))
		if d > c.tol*math.Max(1, maxAbs(golden.Get(c.want))) {
			t.Errorf("%s differs from torch's by %.3g", c.what, d)
		}
	}
}

// maxAbs is the largest |value| of a float32 tensor.
func maxAbs(v *tensors.Tensor) float64 {
	m := 0.0
	for _, x := range tensors.MustCopyFlatData[float32](v) {
		m = math.Max(m, math.Abs(float64(x)))
	}
	return m
}
