package main

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/parity"
)

// TestRunPrintsBothInitialisations runs the experiment for one epoch and
// one seed on a small data file in lightning_mlp.py's format: one line per
// initialisation, each with a finite val_loss, and torchinit changes the
// result (the switch is on).
func TestRunPrintsBothInitialisations(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	rows := func(n, width int) *tensors.Tensor {
		v := make([]float32, n*width)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return tensors.FromFlatDataAndDimensions(v, n, width)
	}
	path := filepath.Join(t.TempDir(), "data.safetensors")
	if err := parity.Write(path, map[string]*tensors.Tensor{
		"train_x": rows(64, 8), "train_y": rows(64, 1), "val_x": rows(32, 8), "val_y": rows(32, 1),
	}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{"-data", path, "-seeds", "1", "-epochs", "1"}, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("printed %d lines, want 2:\n%s", len(lines), out.String())
	}
	var finals []float64
	for i, want := range []string{"gomlx", "torch"} {
		var rec struct {
			Init    string    `json:"init"`
			ValLoss []float64 `json:"val_loss"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Init != want || len(rec.ValLoss) != 1 || math.IsNaN(rec.ValLoss[0]) || math.IsInf(rec.ValLoss[0], 0) {
			t.Errorf("line %d = %s, want init %q and one finite val_loss", i, lines[i], want)
		}
		finals = append(finals, rec.ValLoss[0])
	}
	if finals[0] == finals[1] {
		t.Errorf("both initialisations gave val_loss %v", finals[0])
	}
}
