package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voltml/volt/dist/mpitest"
)

// testTBPTTNaNAgreedPerSplit: TBPTT (16 sequences of 6 steps, batches of
// 2 per rank, splits of 2 steps: 4 batches of 3 splits per rank) with
// TerminateOnNaN on 2 ranks. A clean run agrees once per split (12
// agreements, 12 gradient all-reduces, 12 steps). A NaN in one sample's
// loss-only marker makes that rank's loss NaN in one split while every
// gradient stays finite, so the other rank finds nothing there itself:
// both ranks stop at that split (batch·3 + split + 1 agreements and
// all-reduces on each, no hang, no abort) with the same error, which
// names the rank that read the sample, and bitwise the same weights.
func testTBPTTNaNAgreedPerSplit(t *testing.T, bin string) {
	const splitSize, splits = 2, 3
	args := []string{"-tbptt", fmt.Sprint(splitSize), "-epochs", "1", "-batch", "2"}
	clean := runRanks(t, bin, 2, args...)
	checkRanksAgree(t, clean)
	for _, r := range clean {
		if r.Err != "" || r.GlobalStep != 4*splits || r.NonFiniteAgreements != 4*splits || r.AllReduces != 4*splits {
			t.Errorf("clean run, rank %d: error %q, global step %d, %d agreements, %d all-reduces; want none and 12 of each",
				r.Rank, r.Err, r.GlobalStep, r.NonFiniteAgreements, r.AllReduces)
		}
	}
	for _, c := range []struct{ sample, time int }{{5, 3}, {4, 5}, {0, 0}, {15, 1}} {
		t.Run(fmt.Sprintf("sample_%d_time_%d", c.sample, c.time), func(t *testing.T) {
			t.Parallel()
			rank, batch := -1, -1
			for _, r := range clean {
				for i, b := range r.Batches[0] {
					if slices.Contains(b, c.sample) {
						rank, batch = r.Rank, i
					}
				}
			}
			if rank < 0 {
				t.Fatalf("no rank reads sample %d in the clean run: %v %v", c.sample, clean[0].Batches, clean[1].Batches)
			}
			split := c.time / splitSize
			dir := t.TempDir()
			res := mpitest.Run(t, time.Minute, 2, bin, append(args, "-nan-at", fmt.Sprintf("%d:%d", c.sample, c.time), "-out", dir)...)
			if res.Err == nil || res.TimedOut {
				t.Fatalf("job err %v, timed out %v (%v); want each rank to fail with TerminateOnNaN's error\n%s%s",
					res.Err, res.TimedOut, res.Elapsed, res.Stdout, res.Stderr)
			}
			if strings.Contains(res.Stdout+res.Stderr, "aborting all ranks") {
				t.Errorf("the job was aborted instead of stopped:\n%s%s", res.Stdout, res.Stderr)
			}
			got := readResults(t, filepath.Clean(dir), 2)
			checkRanksAgree(t, got)
			want := fmt.Sprintf("volt: TerminateOnNaN: the loss is NaN at epoch 0, batch %d (global step %d) on rank %d of 2", batch, batch*splits, rank)
			agreements := int64(batch*splits + split + 1)
			for _, r := range got {
				if r.Err != want {
					t.Errorf("rank %d: error %q, want %q", r.Rank, r.Err, want)
				}
				if r.NonFiniteAgreements != agreements || r.AllReduces != agreements {
					t.Errorf("rank %d: %d agreements and %d gradient all-reduces, want %d of each (batch %d, split %d: once per split)",
						r.Rank, r.NonFiniteAgreements, r.AllReduces, agreements, batch, split)
				}
				if len(r.Batches[0]) != batch || r.GlobalStep != int64(batch*splits) {
					t.Errorf("rank %d: %d batches ended, global step %d; want %d and %d", r.Rank, len(r.Batches[0]), r.GlobalStep, batch, batch*splits)
				}
			}
		})
	}
}
