package data

import (
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// positionStream is a StatefulIterable of n numbered examples (offset by
// 1000*epoch) whose state is the index of the next example; it counts the
// examples it yields.
type positionStream struct {
	n       int
	lengths []int
	next    int // the position of the pass in progress
	loaded  int // where the next Iter starts
	yielded int
}

// Iter implements IterableDataset.
func (d *positionStream) Iter(epoch int) iter.Seq2[Example, error] {
	return d.pass(d.n, 1000*epoch)
}

// shardedStream is a positionStream that shards itself: rank r's part is
// lengths[r] examples offset by 100000*r.
type shardedStream struct{ positionStream }

// IterShard implements ShardedIterable.
func (d *shardedStream) IterShard(epoch, rank, _ int) iter.Seq2[Example, error] {
	return d.pass(d.lengths[rank], 100000*rank+1000*epoch)
}

// pass yields examples offset+loaded … offset+n-1.
func (d *positionStream) pass(n, offset int) iter.Seq2[Example, error] {
	return func(yield func(Example, error) bool) {
		d.next, d.loaded = d.loaded, 0
		for d.next < n {
			i := d.next
			d.next++
			d.yielded++
			if !yield(numberedExample(offset+i), nil) {
				return
			}
		}
	}
}

// State implements StatefulIterable.
func (d *positionStream) State() ([]byte, error) {
	return binary.LittleEndian.AppendUint64(nil, uint64(d.next)), nil
}

// LoadState implements StatefulIterable.
func (d *positionStream) LoadState(state []byte) error {
	if len(state) != 8 {
		return fmt.Errorf("positionStream: state of %d bytes, want 8", len(state))
	}
	d.loaded = int(binary.LittleEndian.Uint64(state))
	return nil
}

// TestStatefulStreamResumes: resumed after any batch from that batch's
// StreamState, a stateful stream yields the rest of the uninterrupted
// epoch and reads only those examples.
func TestStatefulStreamResumes(t *testing.T) {
	for _, tc := range []struct {
		n, bs    int
		dropLast bool
	}{{10, 3, false}, {10, 3, true}, {12, 4, false}, {1, 5, false}} {
		for _, workers := range workerCounts {
			t.Run(fmt.Sprintf("n=%d/bs=%d/drop=%v/workers=%d", tc.n, tc.bs, tc.dropLast, workers), func(t *testing.T) {
				full := collectAll(t, &DataLoader{Iterable: &positionStream{n: tc.n}, BatchSize: tc.bs, DropLast: tc.dropLast, Workers: workers}, 2, 0)
				for skip := 1; skip <= len(full); skip++ {
					ds := &positionStream{n: tc.n}
					l := &DataLoader{Iterable: ds, BatchSize: tc.bs, DropLast: tc.dropLast, Workers: workers}
					ctx := WithStreamState(context.Background(), 2, skip, full[skip-1].StreamState)
					var got [][]any
					for b, err := range l.Batches(ctx, 2, skip) {
						if err != nil {
							t.Fatalf("skip %d: %v", skip, err)
						}
						got = append(got, flatOf(b))
					}
					var want [][]any
					for _, b := range full[skip:] {
						want = append(want, flatOf(b))
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("resumed at batch %d: %v, want %v", skip, got, want)
					}
					if read := min(skip*tc.bs, tc.n); ds.yielded != tc.n-read {
						t.Errorf("resumed at batch %d: the dataset yielded %d examples, want the %d after the resume point", skip, ds.yielded, tc.n-read)
					}
				}
			})
		}
	}
}

// TestStreamStateReplayAndErrors: without a state for (epoch, skip) the
// stream replays; a state for another point, or a dataset refusing it, is
// an error naming the point.
func TestStreamStateReplayAndErrors(t *testing.T) {
	full := collectAll(t, &DataLoader{Iterable: &positionStream{n: 9}, BatchSize: 2}, 0, 0)
	ds := &positionStream{n: 9}
	l := &DataLoader{Iterable: ds, BatchSize: 2}
	// A state for another epoch is ignored: the loader replays.
	got := collectAll(t, l, 0, 3)
	if ds.yielded != 9 || len(got) != 2 || !reflect.DeepEqual(flatOf(got[0]), flatOf(full[3])) {
		t.Errorf("replay: yielded %d examples, %d batches; want 9 and 2, the same as the full pass", ds.yielded, len(got))
	}
	for _, tc := range []struct {
		name  string
		state []byte
		want  string
	}{
		{"another batch", full[1].StreamState, "after 2 batches of epoch 0, not after 3 batches of epoch 0"},
		{"not a position", []byte("{"), "stream state"},
		{"dataset refuses", []byte(`{"epoch":0,"batches":3,"examples":6,"dataset":"AAE="}`), "LoadState: positionStream: state of 2 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := WithStreamState(context.Background(), 0, 3, tc.state)
			var gotErr error
			for _, err := range (&DataLoader{Iterable: &positionStream{n: 9}, BatchSize: 2}).Batches(ctx, 0, 3) {
				if err != nil {
					gotErr = err
				}
			}
			if gotErr == nil || !strings.Contains(gotErr.Error(), tc.want) || !strings.Contains(gotErr.Error(), "resuming epoch 0 at batch 3") {
				t.Errorf("error = %v, want one naming the resume point and %q", gotErr, tc.want)
			}
		})
	}
	if b := collectAll(t, &DataLoader{Iterable: &streamDataset{n: 4, failAt: -1}, BatchSize: 2}, 0, 0); b[0].StreamState != nil {
		t.Errorf("a stream without State has StreamState %q, want nil", b[0].StreamState)
	}
}

// agreeGroup simulates the ranks' all-reduce (min) of StreamShard.Agree
// for goroutines, one per rank.
type agreeGroup struct {
	mu      sync.Mutex
	cond    *sync.Cond
	size    int
	round   int
	arrived int
	all     bool // the reduction of the round in progress
	result  bool // the last round's
	calls   []int
}

func newAgreeGroup(size int) *agreeGroup {
	g := &agreeGroup{size: size, all: true, calls: make([]int, size)}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// agree returns rank's Agree function.
func (g *agreeGroup) agree(rank int) func(bool) (bool, error) {
	return func(have bool) (bool, error) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.calls[rank]++
		round := g.round
		g.all = g.all && have
		g.arrived++
		if g.arrived == g.size {
			g.result, g.arrived, g.round = g.all, 0, g.round+1
			g.all = true
			g.cond.Broadcast()
			return g.result, nil
		}
		for g.round == round {
			g.cond.Wait()
		}
		return g.result, nil
	}
}

// runRanks ranges over every rank's StreamShard of ds concurrently (with
// Agree when agree) and returns each rank's batch labels.
func runRanks(t *testing.T, ds func(rank int) IterableDataset, ranks, bs int, dropLast, agree bool, epoch, skip int, states [][]byte) [][][]int32 {
	t.Helper()
	g := newAgreeGroup(ranks)
	out := make([][][]int32, ranks)
	errs := make([]error, ranks)
	var wg sync.WaitGroup
	for r := range ranks {
		wg.Go(func() {
			s := &StreamShard{Loader: &DataLoader{Iterable: ds(r), BatchSize: bs, DropLast: dropLast}, Rank: r, Replicas: ranks}
			if agree {
				s.Agree = g.agree(r)
			}
			ctx := context.Background()
			if states != nil {
				ctx = WithStreamState(ctx, epoch, skip, states[r])
			}
			for b, err := range s.Batches(ctx, epoch, skip) {
				if err != nil {
					errs[r] = err
					return
				}
				out[r] = append(out[r], labelsOf(t, b))
			}
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	return out
}

// TestStreamShardRoundRobin: the ranks' parts of a dealt stream are
// disjoint, each in stream order, and their union is the stream; without
// Agree each rank reads all of its part, with it every rank stops at the
// shortest part's batch count.
func TestStreamShardRoundRobin(t *testing.T) {
	for _, tc := range []struct {
		n, ranks, bs int
		agree        bool
		want         [][][]int32
	}{
		{10, 2, 2, false, [][][]int32{{{0, 2}, {4, 6}, {8}}, {{1, 3}, {5, 7}, {9}}}},
		{9, 2, 2, false, [][][]int32{{{0, 2}, {4, 6}, {8}}, {{1, 3}, {5, 7}}}},
		// Agreement: rank 1 has 2 batches, so rank 0's third (example 8) is not read.
		{9, 2, 2, true, [][][]int32{{{0, 2}, {4, 6}}, {{1, 3}, {5, 7}}}},
		{7, 3, 1, true, [][][]int32{{{0}, {3}}, {{1}, {4}}, {{2}, {5}}}},
	} {
		t.Run(fmt.Sprintf("n=%d/ranks=%d/agree=%v", tc.n, tc.ranks, tc.agree), func(t *testing.T) {
			got := runRanks(t, func(int) IterableDataset { return &positionStream{n: tc.n} }, tc.ranks, tc.bs, false, tc.agree, 0, 0, nil)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ranks' batches = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestStreamShardUnequalParts: a ShardedIterable's parts of different
// lengths: with Agree every rank stops at the shortest part's batch count,
// for any lengths, and the Agree calls match (no rank waits alone).
func TestStreamShardUnequalParts(t *testing.T) {
	for _, lengths := range [][]int{{10, 7}, {7, 10}, {0, 5}, {6, 6}, {3, 9, 5}} {
		for _, dropLast := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/drop=%v", lengths, dropLast), func(t *testing.T) {
				const bs = 2
				got := runRanks(t, func(int) IterableDataset { return &shardedStream{positionStream{lengths: lengths}} }, len(lengths), bs, dropLast, true, 0, 0, nil)
				fewest := -1
				for _, n := range lengths {
					if c := batchCount(n, bs, dropLast); fewest < 0 || c < fewest {
						fewest = c
					}
				}
				for r, batches := range got {
					if len(batches) != fewest {
						t.Errorf("rank %d read %d batches, want the shortest part's %d", r, len(batches), fewest)
					}
					for i, b := range batches {
						if w := int32(100000*r + i*bs); b[0] != w {
							t.Errorf("rank %d batch %d starts with %d, want %d (its own part, in order)", r, i, b[0], w)
						}
					}
				}
			})
		}
	}
}

// TestStreamShardResumes: each rank resumes its own part from its batch's
// StreamState, round-robin and self-sharded alike.
func TestStreamShardResumes(t *testing.T) {
	for _, tc := range []struct {
		name string
		ds   func(rank int) IterableDataset
	}{
		{"round-robin", func(int) IterableDataset { return &positionStream{n: 23} }},
		{"sharded", func(int) IterableDataset { return &shardedStream{positionStream{lengths: []int{13, 9}}} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const ranks, bs = 2, 3
			var full [][]*Batch
			for r := range ranks {
				s := &StreamShard{Loader: &DataLoader{Iterable: tc.ds(r), BatchSize: bs}, Rank: r, Replicas: ranks}
				full = append(full, collectAll(t, s, 1, 0))
			}
			for skip := 1; skip < len(full[1]); skip++ {
				states := [][]byte{full[0][skip-1].StreamState, full[1][skip-1].StreamState}
				got := runRanks(t, tc.ds, ranks, bs, false, false, 1, skip, states)
				for r := range ranks {
					var want [][]int32
					for _, b := range full[r][skip:] {
						want = append(want, labelsOf(t, b))
					}
					if !reflect.DeepEqual(got[r], want) {
						t.Errorf("rank %d resumed at batch %d: %v, want %v", r, skip, got[r], want)
					}
				}
			}
		})
	}
}

// TestStreamShardValidate names each bad field.
func TestStreamShardValidate(t *testing.T) {
	for _, tc := range []struct {
		s    StreamShard
		want []string
	}{
		{StreamShard{Replicas: 0}, []string{"StreamShard.Loader: must be set", "Replicas: must be >= 1"}},
		{StreamShard{Loader: &DataLoader{Dataset: numbered(3), BatchSize: 1}, Rank: 2, Replicas: 2}, []string{"Iterable must be set", "Rank: must be in [0, Replicas=2)"}},
	} {
		err := tc.s.Validate()
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Validate() = %v, want it to contain %q", err, w)
			}
		}
	}
	if n := (&StreamShard{}).NumBatches(); n != -1 {
		t.Error("NumBatches of a stream must be -1 (unknown)")
	}
}
