package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voltml/volt/dist/mpitest"
)

// runJob runs the trainee on ranks ranks (1: one plain process) and returns
// each rank's result.
func runJob(t *testing.T, bin string, ranks int, args ...string) []result {
	t.Helper()
	out := t.TempDir()
	args = append([]string{"-out", out}, args...)
	res := mpitest.Run(t, time.Minute, ranks, bin, args...)
	if res.Err != nil {
		t.Fatalf("mpirun -np %d bntrainee %s: %v\n%s\n%s", ranks, strings.Join(args, " "), res.Err, res.Stdout, res.Stderr)
	}
	results := make([]result, ranks)
	for r := range results {
		raw, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("rank%d.json", r)))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &results[r]); err != nil {
			t.Fatal(err)
		}
	}
	return results
}

func sameStats(a, b result) bool {
	return slices.Equal(a.MeanBits, b.MeanBits) && slices.Equal(a.VarBits, b.VarBits) &&
		a.NumBatchesTracked == b.NumBatchesTracked
}

// TestDistributedBatchNorm: under 2 ranks (mpirun -np 2) batch
// normalization's running statistics end bitwise equal on both ranks, and
// equal to those of one process that trained on rank 0's part of the data
// (PyTorch DDP's broadcast_buffers=True keeps rank 0's buffers); one process
// on rank 1's part ends elsewhere, so the broadcast is what made them equal.
// With AccumulateGradBatches 2 too.
func TestDistributedBatchNorm(t *testing.T) {
	bin := mpitest.Build(t, ".")
	for _, accumulate := range []string{"1", "2"} {
		t.Run("accumulate_"+accumulate, func(t *testing.T) {
			ranks := runJob(t, bin, 2, "-accumulate", accumulate)
			rank0 := runJob(t, bin, 1, "-accumulate", accumulate, "-shard-of", "2", "-shard", "0")[0]
			rank1 := runJob(t, bin, 1, "-accumulate", accumulate, "-shard-of", "2", "-shard", "1")[0]
			if !sameStats(ranks[0], ranks[1]) {
				t.Errorf("the ranks' running statistics differ:\nrank 0 %+v\nrank 1 %+v", ranks[0], ranks[1])
			}
			if !sameStats(ranks[0], rank0) {
				t.Errorf("rank 0's running statistics %v %v differ from one process on rank 0's part: %v %v",
					ranks[0].RunningMean, ranks[0].RunningVar, rank0.RunningMean, rank0.RunningVar)
			}
			if sameStats(rank0, rank1) {
				t.Errorf("ranks 0 and 1's parts give the same statistics %v: the test cannot tell a broadcast", rank0.RunningMean)
			}
			if !slices.Equal(ranks[0].Weights, ranks[1].Weights) || ranks[0].NumBatchesTracked != rank0.NumBatchesTracked {
				t.Errorf("rank 0: weights %v, %d batches tracked; rank 1: weights %v; one process %d batches tracked",
					ranks[0].Weights, ranks[0].NumBatchesTracked, ranks[1].Weights, rank0.NumBatchesTracked)
			}
		})
	}
}

// within reports whether a and b agree to tol, absolutely or relatively to
// the larger magnitude (above 1), value by value.
func within(a, b []float64, tol float64) bool {
	return len(a) == len(b) && deviation(a, b) <= tol
}

// deviation is the largest difference of a and b, relative to the larger
// magnitude where it is above 1.
func deviation(a, b []float64) float64 {
	d := 0.0
	for i := range min(len(a), len(b)) {
		d = max(d, math.Abs(a[i]-b[i])/max(1, math.Abs(a[i]), math.Abs(b[i])))
	}
	return d
}

// TestSyncBatchNorm: Config.SyncBatchNorm under 2 ranks (mpirun -np 2) of
// batch 4 trains as one process with batch 8 over the union of the ranks'
// batches (data.ShardUnion: rank 0's examples, then rank 1's): the same
// losses (the mean of the ranks' own), weights and running statistics
// after 6 steps, within 1e-6, for models with two batch normalizations
// (an MLP; a convolution with BatchNorm2d and a BatchNorm1d with
// CumulativeAverage) and SGD with momentum or Adam, with gradient
// accumulation, and with a smaller last batch (its own programs). The ranks' running
// statistics are bitwise equal. Without SyncBatchNorm the same job ends
// away from the union (the test can tell).
func TestSyncBatchNorm(t *testing.T) {
	bin := mpitest.Build(t, ".")
	cases := []struct{ model, optim, accumulate, batch string }{
		{"mlp2", "sgdm", "1", "4"},
		{"conv2", "adam", "1", "4"},
		{"mlp2", "adam", "2", "4"},
		{"mlp2", "sgdm", "1", "5"}, // 12 examples per rank: batches of 5, 5 and 2
	}
	for _, c := range cases {
		t.Run(c.model+"_"+c.optim+"_accumulate_"+c.accumulate+"_batch_"+c.batch, func(t *testing.T) {
			args := []string{"-model", c.model, "-optim", c.optim, "-epochs", "2", "-accumulate", c.accumulate, "-batch", c.batch}
			ranks := runJob(t, bin, 2, append(args, "-sync")...)
			union := runJob(t, bin, 1, append(args, "-union", "2")...)[0]
			plain := runJob(t, bin, 2, args...)
			if len(union.Losses) < 5 {
				t.Fatalf("one process ran %d steps, want at least 5", len(union.Losses))
			}
			mean := make([]float64, len(ranks[0].Losses))
			for i := range mean {
				mean[i] = (ranks[0].Losses[i] + ranks[1].Losses[i]) / 2
			}
			if !within(mean, union.Losses, 1e-6) {
				t.Errorf("the ranks' mean losses %v differ from one process's over the union %v", mean, union.Losses)
			}
			worst := deviation(mean, union.Losses)
			for r, res := range ranks {
				for path, want := range union.Variables {
					worst = max(worst, deviation(res.Variables[path], want))
					if got := res.Variables[path]; !within(got, want, 1e-6) {
						t.Errorf("rank %d: %s = %v, one process over the union %v", r, path, got, want)
					}
				}
			}
			t.Logf("largest deviation from one process over the union: %.2g", worst)
			for path, v := range ranks[0].Variables {
				if strings.Contains(path, "running") && !slices.Equal(v, ranks[1].Variables[path]) {
					t.Errorf("%s differs between the ranks: %v, %v", path, v, ranks[1].Variables[path])
				}
			}
			if within(plain[0].Variables["/bn2/running_var"], union.Variables["/bn2/running_var"], 1e-3) {
				t.Errorf("without SyncBatchNorm the running variance %v is the union's too: the test cannot tell",
					plain[0].Variables["/bn2/running_var"])
			}
		})
	}
}
