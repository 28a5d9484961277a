package statedict_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voltml/volt/internal/testenv"
	"github.com/voltml/volt/statedict"
)

// python is Debian's python3 with torch, or "" (after skipping t, or
// failing it under VOLT_REQUIRE_TOOLS=1) where it is missing.
func python(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if _, err := os.Stat(py); err == nil {
		if exec.Command(py, "-c", "import torch").Run() == nil {
			return py
		}
	}
	testenv.Missing(t, "no /usr/bin/python3 with torch", "apt-get install python3-torch")
	return ""
}

// TestSaveReadsBackInGoAndTorch: a state dict read from torch's file and
// written by Save reads back in Go with the same tensors, and in PyTorch
// (testdata/torch_load.py) equal to torch's own file: Net's loads with
// load_state_dict(strict=True), and every dtype survives.
func TestSaveReadsBackInGoAndTorch(t *testing.T) {
	g := readGoldens(t)
	for _, tc := range []struct {
		file string
		want map[string]goldenTensor
		net  bool
	}{{"net.pt", g.Net, true}, {"dtypes.pt", g.DTypes, false}} {
		t.Run(tc.file, func(t *testing.T) {
			sd, err := statedict.Read("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "go.safetensors")
			if err := sd.Save(out); err != nil {
				t.Fatal(err)
			}
			back, err := statedict.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			checkTensors(t, back, tc.want, "")
			py := python(t)
			args := []string{"testdata/torch_load.py", out, "testdata/" + tc.file}
			if tc.net {
				args = append(args, "net")
			}
			b, err := exec.Command(py, args...).CombinedOutput()
			if err != nil || !strings.HasPrefix(string(b), "ok ") {
				t.Fatalf("torch_load.py: %v\n%s", err, b)
			}
		})
	}
}

// TestSaveScopeLoadsInTorch: variables loaded from torch's file and saved
// from the scope (SaveScope) load into torch's Net strictly.
func TestSaveScopeLoadsInTorch(t *testing.T) {
	sd, err := statedict.Read("testdata/net.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	scope := newScope(t, netVariables())
	if _, err := sd.Load(scope); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "scope.safetensors")
	if err := statedict.SaveScope(out, scope); err != nil {
		t.Fatal(err)
	}
	py := python(t)
	b, err := exec.Command(py, "testdata/torch_load.py", out, "testdata/net.pt", "net").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(b), "ok 9") {
		t.Fatalf("torch_load.py: %v\n%s", err, b)
	}
}
