package data

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
)

func TestValidate(t *testing.T) {
	ds := numbered(4)
	stream := &streamDataset{n: 4, failAt: -1}
	tests := []struct {
		name    string
		loader  DataLoader
		wantErr []string // empty: valid
	}{
		{"valid map-style", DataLoader{Dataset: ds, BatchSize: 2, Shuffle: true, Workers: 2}, nil},
		{"valid iterable", DataLoader{Iterable: stream, BatchSize: 2}, nil},
		{"batch size -1", DataLoader{Dataset: ds, BatchSize: -1},
			[]string{"data.DataLoader.BatchSize: must be >= 1 (0 means 1), got -1"}},
		{"neither dataset", DataLoader{BatchSize: 1},
			[]string{"data.DataLoader.Dataset/Iterable: exactly one must be set, got neither"}},
		{"both datasets", DataLoader{Dataset: ds, Iterable: stream, BatchSize: 1},
			[]string{"data.DataLoader.Dataset/Iterable: exactly one must be set, got both"}},
		{"shuffle with iterable", DataLoader{Iterable: stream, BatchSize: 1, Shuffle: true},
			[]string{"data.DataLoader.Shuffle: only valid with a map-style Dataset"}},
		{"negative workers", DataLoader{Dataset: ds, BatchSize: 1, Workers: -1},
			[]string{"data.DataLoader.Workers: must be >= 0 (0 = inline), got -1"}},
		{"negative prefetch", DataLoader{Dataset: ds, BatchSize: 1, Prefetch: -3},
			[]string{"data.DataLoader.Prefetch: must be >= 0", "got -3"}},
		{"empty weighted sampler", DataLoader{Dataset: ds, BatchSize: 2, Sampler: WeightedRandomSampler{}},
			[]string{"data.DataLoader.Sampler: data.WeightedRandomSampler.Weights: must not be empty"}},
		{"weighted sampler larger than the dataset", DataLoader{Dataset: ds, BatchSize: 2, Sampler: WeightedRandomSampler{Weights: make([]float64, 5)}},
			[]string{"data.DataLoader.Sampler: data.WeightedRandomSampler.Weights: 5 weights for a dataset of 4 examples"}},
		{"valid weighted sampler", DataLoader{Dataset: ds, BatchSize: 2, Sampler: WeightedRandomSampler{Weights: []float64{1, 0, 2, 1}}}, nil},
		{"several errors at once", DataLoader{BatchSize: -1, Workers: -2},
			[]string{"got neither", "BatchSize", "Workers"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.loader.Validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate: unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate: expected error containing %q, got nil", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Validate error %q does not contain %q", err, want)
				}
			}
			// Batches reports the same error.
			for _, berr := range tc.loader.Batches(t.Context(), 0, 0) {
				if berr == nil || berr.Error() != err.Error() {
					t.Errorf("Batches error = %v, want %v", berr, err)
				}
			}
		})
	}
}

func TestNumBatches(t *testing.T) {
	tests := []struct {
		name   string
		loader DataLoader
		want   int
	}{
		{"10 by 3", DataLoader{Dataset: numbered(10), BatchSize: 3}, 4},
		{"10 by 3 drop last", DataLoader{Dataset: numbered(10), BatchSize: 3, DropLast: true}, 3},
		{"9 by 3", DataLoader{Dataset: numbered(9), BatchSize: 3}, 3},
		{"9 by 3 drop last", DataLoader{Dataset: numbered(9), BatchSize: 3, DropLast: true}, 3},
		{"2 by 3 drop last", DataLoader{Dataset: numbered(2), BatchSize: 3, DropLast: true}, 0},
		{"empty", DataLoader{Dataset: numbered(0), BatchSize: 3}, 0},
		{"iterable", DataLoader{Iterable: &streamDataset{n: 10, failAt: -1}, BatchSize: 3}, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.loader.NumBatches(); got != tc.want {
				t.Errorf("NumBatches() = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestOrder(t *testing.T) {
	seed := func(s uint64) *uint64 { return &s }
	const n = 50
	identity := make([]int, n)
	for i := range identity {
		identity[i] = i
	}
	tests := []struct {
		name    string
		shuffle bool
		seed    *uint64
	}{
		{"no shuffle", false, nil},
		{"shuffle seed 1", true, seed(1)},
		{"shuffle seed 42", true, seed(42)},
		{"shuffle default seed", true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &DataLoader{Dataset: numbered(n), BatchSize: 4, Shuffle: tc.shuffle, Seed: tc.seed}
			e0, e0again, e1 := l.Order(0), l.Order(0), l.Order(1)
			sorted := slices.Sorted(slices.Values(e0))
			if !slices.Equal(sorted, identity) {
				t.Fatalf("Order(0) = %v is not a permutation of 0..%d", e0, n-1)
			}
			if !slices.Equal(e0, e0again) {
				t.Errorf("Order(0) not deterministic: %v vs %v", e0, e0again)
			}
			if !tc.shuffle {
				if !slices.Equal(e0, identity) || !slices.Equal(e1, identity) {
					t.Errorf("without Shuffle, Order must be the identity, got %v and %v", e0, e1)
				}
				return
			}
			if slices.Equal(e0, e1) {
				t.Errorf("Order(0) and Order(1) are equal, want different permutations: %v", e0)
			}
			if slices.Equal(e0, identity) {
				t.Errorf("Order(0) with Shuffle is the identity")
			}
		})
	}
}

func TestOrderSeeds(t *testing.T) {
	mk := func(s uint64) *DataLoader {
		return &DataLoader{Dataset: numbered(30), BatchSize: 4, Shuffle: true, Seed: &s}
	}
	if slices.Equal(mk(1).Order(0), mk(2).Order(0)) {
		t.Error("different seeds gave the same permutation")
	}
	if !slices.Equal(mk(7).Order(3), mk(7).Order(3)) {
		t.Error("same (seed, epoch) gave different permutations")
	}

	// A nil Seed follows DefaultSeed.
	defer SetDefaultSeed(DefaultSeed())
	SetDefaultSeed(7)
	l := &DataLoader{Dataset: numbered(30), BatchSize: 4, Shuffle: true}
	if DefaultSeed() != 7 || !slices.Equal(l.Order(3), mk(7).Order(3)) {
		t.Error("nil Seed does not use DefaultSeed()")
	}

	// A seed in Batches' context wins over DefaultSeed; an own Seed wins over both.
	firstBatch := func(l *DataLoader, ctx context.Context) []int32 {
		for b, err := range l.Batches(ctx, 3, 0) {
			if err != nil {
				t.Fatal(err)
			}
			return tensors.MustCopyFlatData[int32](b.Labels[0])
		}
		return nil
	}
	ctx9 := WithSeed(t.Context(), 9)
	if SeedFrom(ctx9) != 9 || SeedFrom(t.Context()) != 7 {
		t.Errorf("SeedFrom: %d with WithSeed(9), %d without, want 9 and DefaultSeed() 7", SeedFrom(ctx9), SeedFrom(t.Context()))
	}
	if got, want := firstBatch(l, ctx9), firstBatch(mk(9), t.Context()); !slices.Equal(got, want) {
		t.Errorf("nil Seed with WithSeed(9): first batch %v, want seed 9's %v", got, want)
	}
	if got, want := firstBatch(mk(2), ctx9), firstBatch(mk(2), t.Context()); !slices.Equal(got, want) {
		t.Errorf("Seed 2 with WithSeed(9): first batch %v, want seed 2's %v", got, want)
	}
}
