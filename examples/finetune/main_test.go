package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/voltml/volt/examples/internal/stderr"
	"github.com/voltml/volt/internal/testenv"
	"github.com/voltml/volt/statedict"
)

// weightsFile writes resnet18_weights.py's state dict into a temporary
// folder, skipping (failing under VOLT_REQUIRE_TOOLS=1) without Debian's
// python3-torchvision.
func weightsFile(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil || exec.Command(py, "-c", "import torchvision").Run() != nil {
		testenv.Missing(t, "no /usr/bin/python3 with torchvision", "apt-get install python3-torchvision")
	}
	path := filepath.Join(t.TempDir(), "resnet18.pt")
	if b, err := exec.Command(py, "resnet18_weights.py", path).CombinedOutput(); err != nil {
		t.Fatalf("resnet18_weights.py: %v\n%s", err, b)
	}
	return path
}

// small are the flags of a run short enough for CI on 2 cores.
var small = []string{"-train-per-class", "30", "-val-per-class", "20", "-epochs", "3", "-batch", "30", "-progress=false"}

// runExample runs the example with args and returns what it printed.
func runExample(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	var err error
	stderr.NoProgress(t, func() { err = run(append(args, "-root", t.TempDir()), &out, io.Discard) })
	return out.String(), err
}

// TestFineTuneLearns fine-tunes torchvision's ResNet-18 state dict on 300
// MNIST PNGs for 3 epochs, the backbone frozen in the first: epoch 0 trains
// with the backbone frozen, epochs 1 and 2 with its learning rate at a
// tenth of Adam's, then a fifth, and the held-out accuracy is far above
// chance (0.1).
func TestFineTuneLearns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: fine-tunes a ResNet-18")
	}
	out, err := runExample(t, append([]string{"-weights", weightsFile(t)}, small...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("\n%s", out)
	for _, want := range []string{"read 122 tensors", "epoch 0: val_acc", "backbone frozen\n", "epoch 1: val_acc", "backbone lr 0.0001\n", "backbone lr 0.0002\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	const threshold = 0.5
	i := strings.LastIndex(out, "val_acc=")
	if i < 0 {
		t.Fatal("no val_acc= line")
	}
	acc, err := strconv.ParseFloat(strings.TrimSpace(out[i+len("val_acc="):]), 64)
	if err != nil {
		t.Fatal(err)
	}
	if acc < threshold {
		t.Errorf("val_acc %v, want >= %v (chance is 0.1)", acc, threshold)
	}
}

// TestFineTuneRefusesOtherWeights: a state dict that is not ResNet-18's
// (a renamed key; a missing -weights) stops the example before training,
// naming what is wrong.
func TestFineTuneRefusesOtherWeights(t *testing.T) {
	if _, err := runExample(t, small...); err == nil || !strings.Contains(err.Error(), "-weights is required") {
		t.Errorf("no -weights: %v", err)
	}
	sd, err := statedict.Read(weightsFile(t))
	if err != nil {
		t.Fatal(err)
	}
	sd.Set("layer1.0.conv9.weight", sd.Get("layer1.0.conv1.weight"))
	sd.Delete("layer1.0.conv1.weight")
	renamed := filepath.Join(t.TempDir(), "renamed.safetensors")
	if err := sd.Save(renamed); err != nil {
		t.Fatal(err)
	}
	_, err = runExample(t, append([]string{"-weights", renamed, "-epochs", "1"}, small[:4]...)...)
	for _, want := range []string{"not torchvision's ResNet-18", "missing", "layer1.0.conv1.weight", "unexpected", "layer1.0.conv9.weight"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("renamed key: error %v, want one containing %q", err, want)
		}
	}
}
