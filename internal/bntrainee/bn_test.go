package main

import (
	"encoding/json"
	"fmt"
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
