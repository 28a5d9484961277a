package data

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// samplerGoldens is testdata/samplers/goldens.json, written by
// gen_sampler_goldens.py from torch 1.13 and Lightning 2.2.5.
type samplerGoldens struct {
	Cases []struct {
		Name, Kind string
		Seed       uint64
		Params     struct {
			N           int       `json:"n"`
			NumSamples  int       `json:"num_samples"`
			Replacement bool      `json:"replacement"`
			Weights     []float64 `json:"weights"`
			Indices     []int     `json:"indices"`
		}
		Epochs [][]int
	}
	Buckets []struct {
		N             int  `json:"n"`
		BatchSize     int  `json:"batch_size"`
		DropLast      bool `json:"drop_last"`
		BucketBatches int  `json:"bucket_batches"`
		Seed          uint64
		Epochs        [][][]int
	}
	// LoaderReads are a DataLoader over a seeded RandomSampler read by a
	// loop that stops after Limit batches of each epoch (-1: after the
	// last one, asking for no other), as Lightning's fit loop reads it.
	LoaderReads []struct {
		N           int  `json:"n"`
		NumSamples  int  `json:"num_samples"`
		Replacement bool `json:"replacement"`
		BatchSize   int  `json:"batch_size"`
		DropLast    bool `json:"drop_last"`
		Limit       int
		Seed        uint64
		Epochs      [][][]int
	} `json:"loader_reads"`
	Distributed []struct {
		Name      string
		Seed      uint64
		ShardSeed uint64 `json:"shard_seed"`
		DropLast  bool   `json:"drop_last"`
		Ranks     [][][]int
	}
}

func readSamplerGoldens(t *testing.T) samplerGoldens {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "samplers", "goldens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g samplerGoldens
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// goldenWeights are the weights of gen_sampler_goldens.py's WEIGHTS.
var goldenWeights = []float64{0.1, 2.0, 0.0, 1.5, 3.0, 0.25, 1.0, 0.7, 0.0, 5.0, 0.05, 1.25}

// TestSamplersMatchTorch: every sampler yields torch's indices for the
// same seed, epoch after epoch, computing each epoch on its own (as a run
// resumed in that epoch does).
func TestSamplersMatchTorch(t *testing.T) {
	g := readSamplerGoldens(t)
	if len(g.Cases) == 0 {
		t.Fatal("no golden cases")
	}
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			var s Sampler
			n := c.Params.N
			switch c.Kind {
			case "random":
				s = RandomSampler{Replacement: c.Params.Replacement, NumSamples: c.Params.NumSamples}
			case "weighted":
				s, n = WeightedRandomSampler{Weights: c.Params.Weights, NumSamples: c.Params.NumSamples, WithoutReplacement: !c.Params.Replacement}, len(c.Params.Weights)
			case "subset":
				s, n = SubsetRandomSampler{Subset: c.Params.Indices}, 100
			default:
				t.Fatalf("unknown kind %q", c.Kind)
			}
			for epoch, want := range c.Epochs {
				got, err := s.Indices(n, epoch, c.Seed)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Errorf("epoch %d: %v\n want torch's %v", epoch, got, want)
				}
				if s.Len(n) != len(want) {
					t.Errorf("Len(%d) = %d, torch's len %d", n, s.Len(n), len(want))
				}
			}
		})
	}
}

// goldenLength is gen_sampler_goldens.py's length.
func goldenLength(i int) int { return (i * 7919) % 13 }

// TestLengthBucketsMatchTorchnlp: LengthBuckets yields the batches of
// torchnlp's BucketBatchSampler over a sequential order, for the seed of
// torch.manual_seed, epoch after epoch; through a DataLoader too.
func TestLengthBucketsMatchTorchnlp(t *testing.T) {
	for _, c := range readSamplerGoldens(t).Buckets {
		t.Run(fmt.Sprintf("n=%d/bs=%d/drop=%v", c.N, c.BatchSize, c.DropLast), func(t *testing.T) {
			s := LengthBuckets{Length: goldenLength, BatchSize: c.BatchSize, DropLast: c.DropLast, BucketBatches: c.BucketBatches}
			order := make([]int, c.N)
			for i := range order {
				order[i] = i
			}
			for epoch, want := range c.Epochs {
				got, err := s.Batches(order, epoch, c.Seed)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("epoch %d: %v\n want torchnlp's %v", epoch, got, want)
				}
				if s.NumBatches(c.N) != len(want) {
					t.Errorf("NumBatches(%d) = %d, want %d", c.N, s.NumBatches(c.N), len(want))
				}
				l := &DataLoader{Dataset: numbered(c.N), BatchSampler: s, Seed: &c.Seed}
				if got := intLabels(t, collectAll(t, l, epoch, 0)); !reflect.DeepEqual(got, want) {
					t.Errorf("DataLoader, epoch %d: %v\n want %v", epoch, got, want)
				}
			}
		})
	}
}

// intLabels returns the labels of each batch as ints.
func intLabels(t *testing.T, batches []*Batch) [][]int {
	t.Helper()
	out := make([][]int, len(batches))
	for i, b := range batches {
		for _, l := range labelsOf(t, b) {
			out[i] = append(out[i], int(l))
		}
	}
	return out
}

// goldenSampler returns the sampler of a distributed golden case.
func goldenSampler(t *testing.T, name string, seed uint64) Sampler {
	switch name {
	case "weighted num_samples=11":
		return WeightedRandomSampler{Weights: goldenWeights, NumSamples: 11, Seed: &seed}
	case "subset of 7", "subset of 7 drop_last":
		return SubsetRandomSampler{Subset: []int{5, 3, 9, 1, 7, 11, 2}, Seed: &seed}
	}
	t.Fatalf("no sampler for %q", name)
	return nil
}

// TestShardedSamplersMatchLightning: on 2 ranks a Sharded loader with a
// Sampler reads, epoch after epoch, what Lightning 2.2.5's
// DistributedSamplerWrapper over the torch sampler gives each rank
// (sampler seed 5, PL_GLOBAL_SEED 42), also resumed mid-epoch.
func TestShardedSamplersMatchLightning(t *testing.T) {
	for _, c := range readSamplerGoldens(t).Distributed {
		t.Run(c.Name, func(t *testing.T) {
			uneven := PadRepeat
			if c.DropLast {
				uneven = DropTail
			}
			for rank, epochs := range c.Ranks {
				l := &DataLoader{Dataset: numbered(len(goldenWeights)), Sampler: goldenSampler(t, c.Name, c.Seed), BatchSize: 2, Seed: &c.ShardSeed}
				s := &Sharded{Loader: l, Rank: rank, Replicas: 2, Uneven: uneven, PermuteSampler: true}
				for epoch, want := range epochs {
					if got := s.Indices(epoch); !slices.Equal(got, want) {
						t.Errorf("rank %d epoch %d: %v, want Lightning's %v", rank, epoch, got, want)
					}
					if s.NumSamples() != len(want) {
						t.Errorf("rank %d: NumSamples %d, want %d", rank, s.NumSamples(), len(want))
					}
					// Resumed after its first batch: the rest of the shard.
					if got := slices.Concat(intLabels(t, collectAll(t, s, epoch, 1))...); !slices.Equal(got, want[2:]) {
						t.Errorf("rank %d epoch %d resumed at batch 1: %v, want %v", rank, epoch, got, want[2:])
					}
				}
			}
		})
	}
}

// TestDataLoaderSampler: a DataLoader with a Sampler batches the sampler's
// indices in order and, resumed at any batch, yields the rest of the
// epoch; a bad configuration or a failing sampler is an error naming the
// field.
func TestDataLoaderSampler(t *testing.T) {
	seed := uint64(3)
	samplers := []Sampler{
		RandomSampler{}, RandomSampler{Replacement: true, NumSamples: 37}, RandomSampler{NumSamples: 9},
		WeightedRandomSampler{Weights: goldenWeights, NumSamples: 20}, WeightedRandomSampler{Weights: goldenWeights, NumSamples: 5, WithoutReplacement: true},
		SubsetRandomSampler{Subset: []int{0, 4, 8, 12, 16}},
	}
	for _, sampler := range samplers {
		for _, workers := range workerCounts {
			t.Run(fmt.Sprintf("%+v/workers=%d", sampler, workers), func(t *testing.T) {
				l := &DataLoader{Dataset: numbered(20), Sampler: sampler, BatchSize: 3, Seed: &seed, Workers: workers}
				for epoch := range 3 {
					want, err := sampler.Indices(20, epoch, seed)
					if err != nil {
						t.Fatal(err)
					}
					full := intLabels(t, collectAll(t, l, epoch, 0))
					if !slices.Equal(slices.Concat(full...), want) || len(full) != l.NumBatches() {
						t.Fatalf("epoch %d: %v (%d batches), want %v in %d", epoch, full, len(full), want, l.NumBatches())
					}
					for skip := range full {
						if got := intLabels(t, collectAll(t, l, epoch, skip)); !reflect.DeepEqual(got, full[skip:]) {
							t.Errorf("epoch %d resumed at %d: %v, want %v", epoch, skip, got, full[skip:])
						}
					}
				}
			})
		}
	}
	for _, tc := range []struct {
		name string
		l    *DataLoader
		want string
	}{
		{"sampler and shuffle", &DataLoader{Dataset: numbered(4), Sampler: RandomSampler{}, Shuffle: true, BatchSize: 1}, "Shuffle: must be false with a Sampler"},
		{"sampler and stream", &DataLoader{Iterable: &streamDataset{n: 3}, Sampler: RandomSampler{}, BatchSize: 1}, "Sampler: only valid with a map-style Dataset"},
		{"batch sampler and batch size", &DataLoader{Dataset: numbered(4), BatchSampler: LengthBuckets{}, BatchSize: 2}, "BatchSize/DropLast: must be 0/false with a BatchSampler"},
		{"subset out of range", &DataLoader{Dataset: numbered(4), Sampler: SubsetRandomSampler{Subset: []int{1, 4}}, BatchSize: 1}, "SubsetRandomSampler.Subset[1]: 4 is not an index of a dataset of 4 examples"},
		{"negative weight", &DataLoader{Dataset: numbered(4), Sampler: WeightedRandomSampler{Weights: []float64{1, -1}}, BatchSize: 1}, "Weights[1]: -1; weights must be finite and >= 0"},
		{"too many weights", &DataLoader{Dataset: numbered(1), Sampler: WeightedRandomSampler{Weights: []float64{1, 1}}, BatchSize: 1}, "2 weights for a dataset of 1 examples"},
		{"too few positive weights", &DataLoader{Dataset: numbered(4), Sampler: WeightedRandomSampler{Weights: []float64{1, 0, 2}, WithoutReplacement: true}, BatchSize: 1}, "3 indices without replacement, but only 2 weights are > 0"},
		{"buckets without length", &DataLoader{Dataset: numbered(4), BatchSampler: LengthBuckets{BatchSize: 2}}, "LengthBuckets.Length: must be set"},
		{"random sampler of nothing", &DataLoader{Dataset: numbered(0), Sampler: RandomSampler{}, BatchSize: 1}, "RandomSampler: the dataset is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var gotErr error
			for _, err := range tc.l.Batches(context.Background(), 0, 0) {
				if err != nil {
					gotErr = err
				}
			}
			if gotErr == nil || !strings.Contains(gotErr.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", gotErr, tc.want)
			}
		})
	}
}
