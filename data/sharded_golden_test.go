package data

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// lightningRank is the part of a Lightning DDP rank file
// (testdata/lightning_ddp, see its README) these tests read.
type lightningRank struct {
	Config struct {
		Train, Val, Batch int
	}
	TrainSampler  lightningSampler   `json:"train_sampler"`
	ValSampler    lightningSampler   `json:"val_sampler"`
	TrainBatches  map[string][][]int `json:"train_batches"`
	ValBatches    map[string][][]int `json:"val_batches"`
	SanityBatches [][]int            `json:"sanity_batches"`
}

// lightningSampler is the DistributedSampler Lightning used.
type lightningSampler struct {
	Replicas   int  `json:"sampler_num_replicas"`
	Rank       int  `json:"sampler_rank"`
	Shuffle    bool `json:"sampler_shuffle"`
	Seed       int  `json:"sampler_seed"`
	DropLast   bool `json:"sampler_drop_last"`
	NumSamples int  `json:"sampler_num_samples"`
}

// readLightningRank reads testdata/lightning_ddp/<scenario>.rank<r>.json.
func readLightningRank(t *testing.T, scenario string, rank int) lightningRank {
	t.Helper()
	path := filepath.Join("testdata", "lightning_ddp", fmt.Sprintf("%s.rank%d.json", scenario, rank))
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lr lightningRank
	if err := json.Unmarshal(raw, &lr); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if lr.TrainSampler.Rank != rank || lr.TrainSampler.Replicas != 2 {
		t.Fatalf("%s: sampler rank %d of %d, want %d of 2", path, lr.TrainSampler.Rank, lr.TrainSampler.Replicas, rank)
	}
	return lr
}

// shardedBatches returns the sample indices of every batch a Sharded
// loader yields in epoch (the numbered dataset's labels are the indices).
func shardedBatches(t *testing.T, s *Sharded, epoch int) [][]int {
	t.Helper()
	var out [][]int
	for _, b := range collectAll(t, s, epoch, 0) {
		var idx []int
		for _, l := range labelsOf(t, b) {
			idx = append(idx, int(l))
		}
		out = append(out, idx)
	}
	if len(out) != s.NumBatches() {
		t.Errorf("NumBatches() = %d, but Batches yielded %d", s.NumBatches(), len(out))
	}
	return out
}

// TestShardedMatchesLightningDDP checks that each rank reads, batch by
// batch and epoch by epoch, the sample indices real Lightning 2.2.5 gave
// that rank under DDP with 2 ranks (21 training samples, 9 validation
// samples, batch 4).
func TestShardedMatchesLightningDDP(t *testing.T) {
	cases := []struct {
		scenario string
		// shuffle is the volt loader setting that reproduces Lightning's
		// training order: ddp_train_shuffle_false shuffles although the
		// user's loader said shuffle=False (Lightning #21131), so volt needs
		// Shuffle true there, and volt's Shuffle false reproduces
		// Lightning's order only with the user's own unshuffled sampler.
		shuffle bool
	}{
		{"ddp_train_shuffle_false", true},
		{"ddp_train_shuffle_true_seed42", true},
		{"ddp_own_sampler_no_shuffle", false},
	}
	for _, tc := range cases {
		for rank := range 2 {
			t.Run(fmt.Sprintf("%s/rank%d", tc.scenario, rank), func(t *testing.T) {
				lr := readLightningRank(t, tc.scenario, rank)
				if lr.TrainSampler.Shuffle != tc.shuffle || lr.TrainSampler.DropLast {
					t.Fatalf("golden sampler %+v: want shuffle=%v, drop_last=false", lr.TrainSampler, tc.shuffle)
				}
				seed := uint64(lr.TrainSampler.Seed)
				train := &Sharded{Rank: rank, Replicas: 2, Loader: &DataLoader{
					Dataset: numbered(lr.Config.Train), BatchSize: lr.Config.Batch, Shuffle: tc.shuffle, Seed: &seed}}
				if got := train.NumSamples(); got != lr.TrainSampler.NumSamples {
					t.Errorf("train NumSamples() = %d, Lightning's num_samples = %d", got, lr.TrainSampler.NumSamples)
				}
				for epoch := range len(lr.TrainBatches) {
					want := lr.TrainBatches[fmt.Sprint(epoch)]
					if got := shardedBatches(t, train, epoch); !slices.EqualFunc(got, want, slices.Equal) {
						t.Errorf("epoch %d: train batches %v, Lightning %v", epoch, got, want)
					}
				}
				val := &Sharded{Rank: rank, Replicas: 2, Loader: &DataLoader{
					Dataset: numbered(lr.Config.Val), BatchSize: lr.Config.Batch}}
				if got := val.NumSamples(); got != lr.ValSampler.NumSamples {
					t.Errorf("val NumSamples() = %d, Lightning's num_samples = %d", got, lr.ValSampler.NumSamples)
				}
				for epoch, want := range lr.ValBatches {
					if got := shardedBatches(t, val, 0); !slices.EqualFunc(got, want, slices.Equal) {
						t.Errorf("epoch %s: val batches %v, Lightning %v", epoch, got, want)
					}
				}
				if lr.SanityBatches != nil {
					got := shardedBatches(t, val, 0)[:len(lr.SanityBatches)]
					if !slices.EqualFunc(got, lr.SanityBatches, slices.Equal) {
						t.Errorf("sanity batches %v, Lightning %v", got, lr.SanityBatches)
					}
				}
			})
		}
	}
}

// TestShardedShuffleFalseIsHonoured checks the documented difference from
// Lightning: with Shuffle false volt reads the shards in dataset order,
// where Lightning (ddp_train_shuffle_false) shuffled.
func TestShardedShuffleFalseIsHonoured(t *testing.T) {
	for rank := range 2 {
		lightning := readLightningRank(t, "ddp_train_shuffle_false", rank).TrainBatches["0"]
		s := &Sharded{Rank: rank, Replicas: 2, Loader: &DataLoader{Dataset: numbered(21), BatchSize: 4}}
		got := shardedBatches(t, s, 0)
		want := readLightningRank(t, "ddp_own_sampler_no_shuffle", rank).TrainBatches["0"]
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("rank %d: Shuffle false gave %v, want the unshuffled shard %v", rank, got, want)
		}
		if slices.EqualFunc(got, lightning, slices.Equal) {
			t.Errorf("rank %d: Shuffle false gave Lightning's shuffled order %v", rank, lightning)
		}
	}
}
