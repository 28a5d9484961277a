package data

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestShardUnionMatchesLightning checks the union batches against the
// batches of Lightning's single-process reference runs (batch 8 = rank 0's
// batch 4 then rank 1's), epoch by epoch.
func TestShardUnionMatchesLightning(t *testing.T) {
	cases := []struct {
		file    string
		shuffle bool // what reproduces the DDP run's order in volt (see TestShardedMatchesLightningDDP)
	}{
		{"single_union_of_ddp_train_shuffle_false.rank0.json", true},
		{"single_union_of_ddp_own_sampler_no_shuffle.rank0.json", false},
	}
	for _, tc := range cases {
		raw, err := os.ReadFile(filepath.Join("testdata", "lightning_ddp", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		var ref struct {
			TrainBatches map[string][][]int `json:"train_batches"`
		}
		if err := json.Unmarshal(raw, &ref); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		seed := uint64(0)
		u := &ShardUnion{Replicas: 2, Loader: &DataLoader{Dataset: numbered(21), BatchSize: 4, Shuffle: tc.shuffle, Seed: &seed}}
		for epoch := range len(ref.TrainBatches) {
			want := ref.TrainBatches[fmt.Sprint(epoch)]
			if got := u.Indices(epoch); !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("%s epoch %d: Indices %v, Lightning %v", tc.file, epoch, got, want)
			}
			var got [][]int
			for _, b := range collectAll(t, u, epoch, 1) {
				var idx []int
				for _, l := range labelsOf(t, b) {
					idx = append(idx, int(l))
				}
				got = append(got, idx)
			}
			if !slices.EqualFunc(got, want[1:], slices.Equal) {
				t.Errorf("%s epoch %d: Batches from skip 1 %v, Lightning %v", tc.file, epoch, got, want[1:])
			}
		}
	}
}

// TestShardUnionConcatenatesRanks checks, with DropLast and DropTail, that
// union batch k is every rank's batch k in rank order, and that KeepUneven
// is refused.
func TestShardUnionConcatenatesRanks(t *testing.T) {
	seed := uint64(4)
	for _, dropLast := range []bool{false, true} {
		loader := &DataLoader{Dataset: numbered(31), BatchSize: 3, Shuffle: true, Seed: &seed, DropLast: dropLast}
		u := &ShardUnion{Loader: loader, Replicas: 3, Uneven: DropTail}
		got := u.Indices(2)
		// 31 samples, 3 ranks, DropTail: 10 each, in batches 3,3,3,1.
		if want := map[bool]int{false: 4, true: 3}[dropLast]; len(got) != want {
			t.Errorf("dropLast=%v: %d batches, want %d", dropLast, len(got), want)
		}
		if len(got) != u.NumBatches() {
			t.Fatalf("dropLast=%v: %d batches, NumBatches() = %d", dropLast, len(got), u.NumBatches())
		}
		for k, batch := range got {
			var want []int
			for r := range 3 {
				s := (&Sharded{Loader: loader, Rank: r, Replicas: 3, Uneven: DropTail}).Indices(2)
				want = append(want, s[k*3:min(k*3+3, len(s))]...)
			}
			if !slices.Equal(batch, want) {
				t.Errorf("dropLast=%v batch %d: %v, want %v", dropLast, k, batch, want)
			}
		}
	}
	bad := &ShardUnion{Loader: &DataLoader{Dataset: numbered(5), BatchSize: 2}, Replicas: 2, Uneven: KeepUneven}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "data.ShardUnion.Uneven") {
		t.Errorf("KeepUneven: Validate() = %v", err)
	}
	if err := (&ShardUnion{Replicas: 2}).Validate(); err == nil || !strings.Contains(err.Error(), "data.ShardUnion: data.Sharded.Loader: must be set") {
		t.Errorf("no loader: Validate() = %v", err)
	}
}
