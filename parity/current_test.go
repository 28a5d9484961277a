package parity_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/internal/testenv"
	"github.com/voltml/volt/parity"
)

// TestMLPCasesAreCurrent runs tools/parity/mlp.py (where /usr/bin/python3
// imports torch) into a temporary folder and compares its files with the
// committed ones: weights and batches bitwise, PyTorch's losses within
// 1e-6 relative (another BLAS may round a matmul differently).
func TestMLPCasesAreCurrent(t *testing.T) {
	python := "/usr/bin/python3"
	if p := os.Getenv("VOLT_LIGHTNING_PYTHON"); p != "" {
		python = p
	}
	if out, err := exec.Command(python, "-c", "import torch").CombinedOutput(); err != nil {
		testenv.Missing(t, python+" cannot import torch: "+string(bytes.TrimSpace(out)), "apt-get install python3-torch")
	}
	dir := t.TempDir()
	if out, err := exec.Command(python, filepath.Join("..", "tools", "parity", "mlp.py"), "--out", dir).CombinedOutput(); err != nil {
		t.Fatalf("mlp.py: %v\n%s", err, out)
	}
	for _, tc := range mlpCases {
		committed, err := parity.Read(filepath.Join("testdata", tc.name+".safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := parity.Read(filepath.Join(dir, tc.name+".safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range committed.ByName {
			got, ok := fresh.ByName[name]
			if !ok {
				t.Errorf("%s: mlp.py no longer writes %q", tc.name, name)
				continue
			}
			if name == "loss" {
				g, _ := fresh.Float64s(name)
				w, _ := committed.Float64s(name)
				if bad, _, err := parity.Compare(g, w, 1e-6); err != nil || len(bad) > 0 {
					t.Errorf("%s: PyTorch's losses changed: %v %v", tc.name, bad, err)
				}
				continue
			}
			if !want.Shape().Equal(got.Shape()) || !slices.Equal(rawBytes(want), rawBytes(got)) {
				t.Errorf("%s: tensor %q differs from the committed one; regenerate with /usr/bin/python3 tools/parity/mlp.py", tc.name, name)
			}
		}
		if len(fresh.ByName) != len(committed.ByName) {
			t.Errorf("%s: mlp.py writes %d tensors, the committed file holds %d", tc.name, len(fresh.ByName), len(committed.ByName))
		}
	}
}

func rawBytes(t *tensors.Tensor) []byte {
	var out []byte
	t.ConstBytes(func(b []byte) { out = slices.Clone(b) })
	return out
}
