package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voltml/volt/dist"
	"github.com/voltml/volt/dist/mpitest"
)

// runGAN runs the example binary with args plus -out and returns the
// results of its ranks.
func runGAN(t *testing.T, bin string, ranks int, args ...string) []result {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(bin, append(args, "-out", dir)...)
	cmd.Env = append(os.Environ(), dist.LaunchEnv()...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gan %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr.String())
	}
	if n := strings.Count(string(out), "ring_distance"); n != 1 {
		t.Errorf("gan %s printed %d ring_distance lines, want rank 0's alone:\n%s", strings.Join(args, " "), n, out)
	}
	res := make([]result, ranks)
	for r := range res {
		raw, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("rank%d.json", r)))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &res[r]); err != nil {
			t.Fatal(err)
		}
		if res[r].Rank != r || res[r].World != ranks {
			t.Fatalf("rank%d.json is rank %d of %d, want %d of %d", r, res[r].Rank, res[r].World, r, ranks)
		}
	}
	return res
}

// weightDiff returns the largest absolute difference between a's and b's
// weights.
func weightDiff(t *testing.T, a, b result) float64 {
	t.Helper()
	if len(a.Weights) != len(b.Weights) || len(a.Weights) == 0 {
		t.Fatalf("%d and %d weight tensors", len(a.Weights), len(b.Weights))
	}
	d := 0.0
	for path, w := range a.Weights {
		v := b.Weights[path]
		if len(v) != len(w) {
			t.Fatalf("%s: %d and %d values", path, len(w), len(v))
		}
		for i := range w {
			d = max(d, math.Abs(w[i]-v[i]))
		}
	}
	return d
}

// lossDiff returns the largest absolute difference between a's and b's
// losses per batch.
func lossDiff(t *testing.T, a, b result) float64 {
	t.Helper()
	if len(a.Losses) != len(b.Losses) || len(a.Losses) == 0 {
		t.Fatalf("%d and %d batches of losses", len(a.Losses), len(b.Losses))
	}
	d := 0.0
	for i := range a.Losses {
		for j := range a.Losses[i] {
			d = max(d, math.Abs(a.Losses[i][j]-b.Losses[i][j]))
		}
	}
	return d
}

// TestDevices2EqualsOneProcessOfTwiceTheBatch builds the example with -tags
// mpi and runs it with -devices 2 (it runs itself again as 2 MPI ranks,
// batch B each, both OptimizerHandle.Step's gradients all-reduced) and as
// one process reading the two ranks' batches together (-union 2: batch
// 2B): in float32 the weights and the logged losses of every batch agree
// within 1e-6, and the two ranks end with bitwise the same weights. One
// process at batch B, a different training, differs by far more.
func TestDevices2EqualsOneProcessOfTwiceTheBatch(t *testing.T) {
	bin := mpitest.Build(t, ".")
	args := []string{"-epochs", "2", "-examples", "256", "-batch", "32"}
	ranks := runGAN(t, bin, 2, append([]string{"-devices", "2"}, args...)...)
	union := runGAN(t, bin, 1, append([]string{"-union", "2"}, args...)...)[0]
	alone := runGAN(t, bin, 1, args...)[0]

	// 256 points in batches of 2 × 32: 4 batches, 2 Steps each, 2 epochs.
	for _, r := range append(ranks, union) {
		if r.GlobalStep != 16 || len(r.Losses) != 8 {
			t.Errorf("rank %d of %d: global step %d after %d batches, want 16 after 8", r.Rank, r.World, r.GlobalStep, len(r.Losses))
		}
	}
	if d := weightDiff(t, ranks[0], ranks[1]); d != 0 {
		t.Errorf("the ranks' weights differ by up to %g", d)
	}
	w, l := weightDiff(t, ranks[0], union), lossDiff(t, ranks[0], union)
	t.Logf("-devices 2 against -union 2: weights differ by up to %.3g, losses by up to %.3g", w, l)
	if w > 1e-6 || l > 1e-6 {
		t.Errorf("-devices 2 and one process of twice the batch differ by up to %g (weights) and %g (losses), want <= 1e-6", w, l)
	}
	if d := math.Abs(ranks[0].RingDistance[1] - union.RingDistance[1]); d > 1e-6 {
		t.Errorf("ring_distance after training: %v on 2 ranks, %v in one process", ranks[0].RingDistance[1], union.RingDistance[1])
	}
	if d := weightDiff(t, ranks[0], alone); d < 1e-3 {
		t.Errorf("-devices 2 and one process of batch B differ by only %g: the comparison cannot tell trainings apart", d)
	}
}
