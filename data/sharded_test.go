package data

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestMT19937 checks the generator against the value the C++ standard
// ([rand.predef]) requires of std::mt19937: its 10000th output from the
// default seed 5489 is 4123659995.
func TestMT19937(t *testing.T) {
	mt := newMT19937(5489)
	var v uint32
	for range 10000 {
		v = mt.next()
	}
	if v != 4123659995 {
		t.Errorf("10000th output = %d, want 4123659995", v)
	}
}

// TestTorchRandpermIsPermutation checks that TorchRandperm returns a
// permutation of 0..n-1 that depends on the seed.
func TestTorchRandpermIsPermutation(t *testing.T) {
	for _, n := range []int{0, 1, 2, 21, 1000} {
		p := TorchRandperm(n, 7)
		sorted := slices.Sorted(slices.Values(p))
		for i, v := range sorted {
			if v != i {
				t.Fatalf("n=%d: %v is not a permutation of 0..%d", n, p, n-1)
			}
		}
		if n >= 21 && slices.Equal(p, TorchRandperm(n, 8)) {
			t.Errorf("n=%d: seeds 7 and 8 give the same permutation", n)
		}
	}
}

// TestShardedProperties checks, for many sizes, rank counts and policies,
// how the ranks' shards of one epoch partition the epoch's order:
// PadRepeat: equal lengths ⌈n/R⌉, together the order plus its first
// indices again; DropTail: equal lengths ⌊n/R⌋, disjoint, together the
// order without its last n mod R; KeepUneven: disjoint, together exactly
// the order. In all, rank r's k-th index is position r+k·R of that
// sequence.
func TestShardedProperties(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 5, 8, 21, 22, 100} {
		for _, replicas := range []int{1, 2, 3, 4, 8} {
			for _, uneven := range []Uneven{PadRepeat, DropTail, KeepUneven} {
				for _, shuffle := range []bool{false, true} {
					name := fmt.Sprintf("n=%d/R=%d/%s/shuffle=%v", n, replicas, uneven, shuffle)
					checkShards(t, name, n, replicas, uneven, shuffle)
				}
			}
		}
	}
}

// checkShards checks one configuration of TestShardedProperties.
func checkShards(t *testing.T, name string, n, replicas int, uneven Uneven, shuffle bool) {
	t.Helper()
	seed := uint64(3)
	const epoch = 1
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	if shuffle {
		order = TorchRandperm(n, seed+epoch)
	}
	// The sequence the ranks deal from, built here by the policy's rule.
	var seq []int
	switch uneven {
	case PadRepeat:
		total := (n + replicas - 1) / replicas * replicas
		for len(seq) < total {
			seq = append(seq, order[:min(n, total-len(seq))]...)
		}
	case DropTail:
		seq = order[:n-n%replicas]
	case KeepUneven:
		seq = order
	}
	lengths := map[int]bool{}
	var all []int
	for rank := range replicas {
		s := &Sharded{Rank: rank, Replicas: replicas, Uneven: uneven,
			Loader: &DataLoader{Dataset: numbered(n), BatchSize: 3, Shuffle: shuffle, Seed: &seed}}
		got := s.Indices(epoch)
		if len(got) != s.NumSamples() {
			t.Errorf("%s: rank %d: %d indices, NumSamples() = %d", name, rank, len(got), s.NumSamples())
		}
		for k, idx := range got {
			if want := seq[rank+k*replicas]; idx != want {
				t.Fatalf("%s: rank %d index %d = %d, want position %d of the sequence, %d", name, rank, k, idx, rank+k*replicas, want)
			}
		}
		lengths[len(got)] = true
		all = append(all, got...)
	}
	if len(all) != len(seq) {
		t.Errorf("%s: the shards hold %d indices together, want %d", name, len(all), len(seq))
	}
	if uneven != KeepUneven && len(lengths) > 1 {
		t.Errorf("%s: the ranks' shard lengths differ: %v", name, lengths)
	}
	if uneven != PadRepeat {
		seen := map[int]bool{}
		for _, idx := range all {
			if seen[idx] {
				t.Errorf("%s: index %d is in two shards", name, idx)
			}
			seen[idx] = true
		}
	}
	if uneven == PadRepeat || uneven == KeepUneven {
		if covered := len(slices.Compact(slices.Sorted(slices.Values(all)))); covered != n {
			t.Errorf("%s: the shards cover %d of the %d indices", name, covered, n)
		}
	}
}

// TestShardedReshufflesPerEpoch checks that the shuffled shards change
// from epoch to epoch and are the same for the same epoch.
func TestShardedReshufflesPerEpoch(t *testing.T) {
	seed := uint64(0)
	s := &Sharded{Rank: 1, Replicas: 2, Loader: &DataLoader{Dataset: numbered(50), BatchSize: 4, Shuffle: true, Seed: &seed}}
	if slices.Equal(s.Indices(0), s.Indices(1)) {
		t.Error("epochs 0 and 1 read the same shard order")
	}
	if !slices.Equal(s.Indices(2), s.Indices(2)) {
		t.Error("epoch 2 read two different orders")
	}
	SetDefaultSeed(5)
	defer SetDefaultSeed(0)
	s.Loader.Seed = nil
	if want := shard(TorchRandperm(50, 5+3), 1, 2, PadRepeat); !slices.Equal(s.Indices(3), want) {
		t.Errorf("with Seed nil, epoch 3 = %v, want the order of DefaultSeed()+3 = 8: %v", s.Indices(3), want)
	}
}

// TestShardedResume checks that Batches from skip k yields exactly the
// batches k.. of a full pass, with inline and parallel collation and with
// DropLast.
func TestShardedResume(t *testing.T) {
	seed := uint64(9)
	for _, workers := range []int{0, 3} {
		for _, dropLast := range []bool{false, true} {
			s := &Sharded{Rank: 2, Replicas: 3, Loader: &DataLoader{Dataset: numbered(40), BatchSize: 3,
				Shuffle: true, Seed: &seed, Workers: workers, DropLast: dropLast}}
			full := shardedBatches(t, s, 4)
			wantBatches := 14 / 3
			if !dropLast {
				wantBatches = 5
			}
			if len(full) != wantBatches {
				t.Errorf("workers=%d dropLast=%v: %d batches of a 14-sample shard, want %d", workers, dropLast, len(full), wantBatches)
			}
			for skip := range len(full) + 1 {
				var got [][]int
				for _, b := range collectAll(t, s, 4, skip) {
					var idx []int
					for _, l := range labelsOf(t, b) {
						idx = append(idx, int(l))
					}
					got = append(got, idx)
				}
				if !slices.EqualFunc(got, full[skip:], slices.Equal) {
					t.Errorf("workers=%d dropLast=%v skip=%d: %v, want %v", workers, dropLast, skip, got, full[skip:])
				}
			}
		}
	}
}

// TestShardedValidate checks that bad configurations are refused with an
// error naming the field, by Validate and by Batches.
func TestShardedValidate(t *testing.T) {
	ok := &DataLoader{Dataset: numbered(4), BatchSize: 2}
	cases := []struct {
		name string
		s    Sharded
		want []string
	}{
		{"no loader", Sharded{Replicas: 2}, []string{"data.Sharded.Loader: must be set"}},
		{"iterable", Sharded{Replicas: 2, Loader: &DataLoader{Iterable: &streamDataset{n: 3}, BatchSize: 2}},
			[]string{"Iterable dataset cannot be sharded"}},
		{"bad loader", Sharded{Replicas: 2, Loader: &DataLoader{Dataset: numbered(4), BatchSize: -1}},
			[]string{"data.Sharded.Loader: data.DataLoader.BatchSize: must be >= 1 (0 means 1), got -1"}},
		{"zero replicas", Sharded{Loader: ok}, []string{"data.Sharded.Replicas: must be >= 1, got 0"}},
		{"rank too big", Sharded{Rank: 2, Replicas: 2, Loader: ok}, []string{"data.Sharded.Rank: must be in [0, Replicas=2), got 2"}},
		{"negative rank", Sharded{Rank: -1, Replicas: 2, Loader: ok}, []string{"got -1"}},
		{"bad uneven", Sharded{Replicas: 2, Uneven: 9, Loader: ok}, []string{"data.Sharded.Uneven: 9 is not one of"}},
		{"two errors", Sharded{Rank: 5, Replicas: 2, Uneven: -1, Loader: ok}, []string{"Sharded.Rank", "Sharded.Uneven"}},
	}
	for _, tc := range cases {
		err := tc.s.Validate()
		if err == nil {
			t.Errorf("%s: Validate() = nil", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: Validate() = %v, want it to contain %q", tc.name, err, w)
			}
		}
		if tc.s.NumBatches() != 0 || tc.s.Indices(0) != nil {
			t.Errorf("%s: NumBatches/Indices of an invalid configuration are not 0/nil", tc.name)
		}
		for _, berr := range tc.s.Batches(context.Background(), 0, 0) {
			if berr == nil || berr.Error() != err.Error() {
				t.Errorf("%s: Batches error %v, want %v", tc.name, berr, err)
			}
		}
	}
	good := Sharded{Replicas: 2, Loader: ok}
	for _, berr := range good.Batches(context.Background(), 0, -1) {
		if berr == nil || !strings.Contains(berr.Error(), "data.Sharded.Batches: skip must be >= 0") {
			t.Errorf("skip -1: error %v", berr)
		}
	}
}
