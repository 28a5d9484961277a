package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voltml/volt/dist/mpitest"
)

// runJob runs the trainee on 2 ranks and returns their results, failing
// the test when the job fails or hangs (the minute's timeout).
func runJob(t *testing.T, bin string, args ...string) []result {
	t.Helper()
	out := t.TempDir()
	res := mpitest.Run(t, time.Minute, 2, bin, append([]string{"-out", out}, args...)...)
	if res.Err != nil {
		t.Fatalf("mpirun -np 2 streamtrainee %s: %v (timed out: %v)\n%s\n%s", strings.Join(args, " "), res.Err, res.TimedOut, res.Stdout, res.Stderr)
	}
	got := make([]result, 2)
	for r := range got {
		raw, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("rank%d.json", r)))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &got[r]); err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// ids returns first, first+step, … (count of them).
func ids(first, step, count int) []int {
	out := make([]int, count)
	for i := range out {
		out[i] = first + i*step
	}
	return out
}

// flat returns the ids of the batches, in order.
func flat(batches [][]int) []int { return slices.Concat(batches...) }

// TestStreamsOnTwoRanks runs the stream scenarios under mpirun -np 2.
func TestStreamsOnTwoRanks(t *testing.T) {
	bin := mpitest.Build(t, ".")
	t.Run("unequal_parts_stop_together", func(t *testing.T) { t.Parallel(); testUnequalParts(t, bin) })
	t.Run("round_robin_split", func(t *testing.T) { t.Parallel(); testRoundRobin(t, bin) })
	t.Run("resume_each_rank", func(t *testing.T) { t.Parallel(); testResume(t, bin) })
	t.Run("samplers_match_lightning", func(t *testing.T) { t.Parallel(); testSamplers(t, bin) })
}

// testUnequalParts: the ranks' parts of a self-sharded stream have
// different lengths; every rank trains the shortest part's batch count
// each epoch (no hang), each its own part from its start, and the ranks
// end with the same weights. The longer part's examples past that count
// are the only ones not trained.
func testUnequalParts(t *testing.T, bin string) {
	for _, tc := range []struct {
		parts   string
		lengths [2]int
		batches int // per epoch, the shortest part's
	}{
		{"10,7", [2]int{10, 7}, 4},
		{"3,9", [2]int{3, 9}, 2},
	} {
		res := runJob(t, bin, "-parts", tc.parts, "-bs", "2", "-epochs", "2")
		for r, got := range res {
			if got.GlobalStep != int64(2*tc.batches) || len(got.Batches) != 2*tc.batches {
				t.Errorf("parts %s: rank %d trained %d batches in %d steps, want %d each epoch", tc.parts, r, len(got.Batches), got.GlobalStep, tc.batches)
				continue
			}
			trained := min(tc.lengths[r], 2*tc.batches)
			want := slices.Concat(ids(100000*r, 1, trained), ids(100000*r, 1, trained))
			if f := flat(got.Batches); !slices.Equal(f, want) {
				t.Errorf("parts %s: rank %d trained %v, want %v", tc.parts, r, f, want)
			}
		}
		if !slices.Equal(res[0].Weights, res[1].Weights) {
			t.Errorf("parts %s: the ranks' weights differ", tc.parts)
		}
	}
}

// testRoundRobin: volt deals a stream of 21 examples round-robin: rank 0
// the even ids (11, 6 batches of 2), rank 1 the odd ones (10, 5 batches);
// both train 5 batches, so id 20 alone is not trained.
func testRoundRobin(t *testing.T, bin string) {
	res := runJob(t, bin, "-n", "21", "-bs", "2")
	for r, got := range res {
		if want := ids(r, 2, 10); !slices.Equal(flat(got.Batches), want) || got.GlobalStep != 5 {
			t.Errorf("rank %d trained %v in %d steps, want %v in 5", r, flat(got.Batches), got.GlobalStep, want)
		}
	}
	if !slices.Equal(res[0].Weights, res[1].Weights) {
		t.Error("the ranks' weights differ")
	}
}

// testResume: a 2-rank job checkpointed inside epoch 0 and
// resumed by a new job ends with the uninterrupted job's weights, bit for
// bit, each rank training the batches the uninterrupted one trained after
// the checkpoint and reading only the examples after its position.
func testResume(t *testing.T, bin string) {
	for _, tc := range []struct {
		name   string
		args   []string
		saveAt string
		read   [2]int // examples each resumed rank reads
	}{
		// Rank r's 12th example (the last of batch 4) is id r+22 of the
		// 41: it reads the rest of epoch 0 and all of epoch 1.
		{"round-robin", []string{"-n", "41"}, "4", [2]int{41 - 23 + 41, 41 - 24 + 41}},
		// Parts of 13 and 9: 3 batches an epoch. After 2 batches rank 0
		// reads 6 … 11 (its 4th batch, refused: rank 1 has none) and 12 in
		// epoch 1; rank 1 reads 6 … 8, then 9.
		{"self-sharded", []string{"-parts", "13,9"}, "2", [2]int{6 + 12, 3 + 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ckpt := filepath.Join(t.TempDir(), "stream.ckpt")
			args := append([]string{"-bs", "3", "-epochs", "2", "-ckpt", ckpt}, tc.args...)
			full := runJob(t, bin, append(args, "-save-at", tc.saveAt)...)
			resumed := runJob(t, bin, append(args, "-resume")...)
			for r := range 2 {
				u, got := full[r], resumed[r]
				if !reflect.DeepEqual(got.Weights, u.Weights) {
					t.Errorf("rank %d: the resumed job's weights differ from the uninterrupted job's", r)
				}
				at, _ := strconv.Atoi(tc.saveAt)
				if len(u.Batches) < at || !reflect.DeepEqual(got.Batches, u.Batches[at:]) {
					t.Errorf("rank %d: resumed job trained %v, the uninterrupted job after its checkpoint %v", r, got.Batches, u.Batches[min(at, len(u.Batches)):])
				}
				if want := tc.read[r]; got.Read != want {
					t.Errorf("rank %d: the resumed job read %d examples, want %d (from its position on)", r, got.Read, want)
				}
				if strings.Contains(got.Log, "reads and discards") {
					t.Errorf("rank %d: a stateful stream's resume replayed:\n%s", r, got.Log)
				}
			}
		})
	}
}

// testSamplers: a Fit on 2 ranks with a WeightedRandomSampler or a
// SubsetRandomSampler trains, on each rank, the indices Lightning 2.2.5's
// DistributedSamplerWrapper gives that rank over the torch sampler
// (data/testdata/samplers/goldens.json), epoch after epoch; resumed from a
// checkpoint inside epoch 1, each rank trains the rest of them and ends
// with the uninterrupted job's weights, bit for bit.
func testSamplers(t *testing.T, bin string) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "data", "testdata", "samplers", "goldens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var goldens struct {
		Distributed []struct {
			Name  string
			Ranks [][][]int
		}
	}
	if err := json.Unmarshal(raw, &goldens); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ flag, golden string }{{"weighted", "weighted num_samples=11"}, {"subset", "subset of 7"}} {
		t.Run(tc.flag, func(t *testing.T) {
			i := slices.IndexFunc(goldens.Distributed, func(d struct {
				Name  string
				Ranks [][][]int
			}) bool {
				return d.Name == tc.golden
			})
			if i < 0 {
				t.Fatalf("no golden %q", tc.golden)
			}
			ckpt := filepath.Join(t.TempDir(), "sampler.ckpt")
			args := []string{"-sampler", tc.flag, "-bs", "2", "-epochs", "3", "-ckpt", ckpt}
			full := runJob(t, bin, append(args, "-save-at", "4")...)
			resumed := runJob(t, bin, append(args, "-resume")...)
			for r := range 2 {
				want := slices.Concat(goldens.Distributed[i].Ranks[r]...)
				if got := flat(full[r].Batches); !slices.Equal(got, want) {
					t.Errorf("rank %d trained %v, want Lightning's %v", r, got, want)
				}
				if got, rest := flat(resumed[r].Batches), flat(full[r].Batches[4:]); !slices.Equal(got, rest) {
					t.Errorf("rank %d resumed trained %v, want %v", r, got, rest)
				}
				if !reflect.DeepEqual(resumed[r].Weights, full[r].Weights) {
					t.Errorf("rank %d: the resumed job's weights differ from the uninterrupted job's", r)
				}
			}
		})
	}
}
