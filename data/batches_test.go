package data

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

var workerCounts = []int{0, 1, 2, 4, 8}

func TestBatchesSizes(t *testing.T) {
	tests := []struct {
		name     string
		n, bs    int
		dropLast bool
		want     [][]int32
	}{
		{"10 by 3", 10, 3, false, [][]int32{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}}},
		{"10 by 3 drop last", 10, 3, true, [][]int32{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}},
		{"6 by 3 drop last", 6, 3, true, [][]int32{{0, 1, 2}, {3, 4, 5}}},
		{"batch larger than dataset", 2, 5, false, [][]int32{{0, 1}}},
		{"batch larger than dataset drop last", 2, 5, true, nil},
		{"empty dataset", 0, 5, false, nil},
	}
	for _, tc := range tests {
		for _, workers := range workerCounts {
			t.Run(fmt.Sprintf("%s/workers=%d", tc.name, workers), func(t *testing.T) {
				l := &DataLoader{Dataset: numbered(tc.n), BatchSize: tc.bs, DropLast: tc.dropLast, Workers: workers}
				got := collectLabels(t, l, 0, 0)
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("batches = %v, want %v", got, tc.want)
				}
				if len(got) != l.NumBatches() {
					t.Errorf("yielded %d batches, NumBatches() = %d", len(got), l.NumBatches())
				}
				for _, b := range collectAll(t, l, 0, 0) {
					if dims := b.Inputs[0].Shape().Dimensions; b.Size != dims[0] || dims[1] != 2 {
						t.Errorf("batch Size=%d, inputs dims %v; want [Size 2]", b.Size, dims)
					}
				}
			})
		}
	}
}

func TestBatchesIdenticalForAnyWorkers(t *testing.T) {
	for _, shuffle := range []bool{false, true} {
		for _, dropLast := range []bool{false, true} {
			name := fmt.Sprintf("shuffle=%v/dropLast=%v", shuffle, dropLast)
			t.Run(name, func(t *testing.T) {
				seed := uint64(3)
				var want [][]any
				for _, workers := range workerCounts {
					for _, prefetch := range []int{0, 1, 5} {
						l := &DataLoader{Dataset: numbered(103), BatchSize: 7, Shuffle: shuffle, Seed: &seed,
							DropLast: dropLast, Workers: workers, Prefetch: prefetch}
						var got [][]any
						for _, b := range collectAll(t, l, 2, 0) {
							got = append(got, flatOf(b))
						}
						if want == nil {
							want = got
							continue
						}
						if !reflect.DeepEqual(got, want) {
							t.Fatalf("workers=%d prefetch=%d: batches differ from workers=0", workers, prefetch)
						}
					}
				}
			})
		}
	}
}

func TestBatchesShuffleEpochs(t *testing.T) {
	seed := uint64(11)
	l := &DataLoader{Dataset: numbered(20), BatchSize: 4, Shuffle: true, Seed: &seed, Workers: 2}
	e0, e0again, e1 := collectLabels(t, l, 0, 0), collectLabels(t, l, 0, 0), collectLabels(t, l, 1, 0)
	if !reflect.DeepEqual(e0, e0again) {
		t.Errorf("epoch 0 not deterministic: %v vs %v", e0, e0again)
	}
	if reflect.DeepEqual(e0, e1) {
		t.Errorf("epochs 0 and 1 have the same order: %v", e0)
	}
	var flat []int
	for _, b := range e0 {
		for _, v := range b {
			flat = append(flat, int(v))
		}
	}
	if want := l.Order(0); !reflect.DeepEqual(flat, want) {
		t.Errorf("batched labels %v do not follow Order(0) %v", flat, want)
	}
}

func TestBatchesSkip(t *testing.T) {
	seed := uint64(5)
	for _, workers := range []int{0, 3} {
		for _, skip := range []int{0, 1, 2, 3, 4, 10} {
			t.Run(fmt.Sprintf("workers=%d/skip=%d", workers, skip), func(t *testing.T) {
				ds := &countingDataset{Slice: numbered(10), failAt: -1}
				l := &DataLoader{Dataset: ds, BatchSize: 3, Shuffle: true, Seed: &seed, Workers: workers}
				full := collectLabels(t, l, 1, 0)
				ds.gets.Store(0)
				got := collectLabels(t, l, 1, skip)
				want := full[min(skip, len(full)):]
				if len(want) == 0 {
					want = nil
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("skip=%d: got %v, want %v", skip, got, want)
				}
				wantGets := 0
				for _, b := range want {
					wantGets += len(b)
				}
				if n := ds.gets.Load(); n != int64(wantGets) {
					t.Errorf("skip=%d: %d Get calls, want %d (skipped batches must not be built)", skip, n, wantGets)
				}
			})
		}
	}
}

func TestBatchesNegativeSkip(t *testing.T) {
	l := &DataLoader{Dataset: numbered(4), BatchSize: 2}
	for _, err := range l.Batches(context.Background(), 0, -1) {
		if err == nil || !strings.Contains(err.Error(), "skip must be >= 0, got -1") {
			t.Errorf("error = %v, want skip error", err)
		}
	}
}

func TestBatchesGetError(t *testing.T) {
	for _, workers := range workerCounts {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			ds := &countingDataset{Slice: numbered(10), failAt: 7}
			l := &DataLoader{Dataset: ds, BatchSize: 3, Workers: workers}
			var got [][]int32
			var gotErr error
			calls := 0
			for b, err := range l.Batches(context.Background(), 0, 0) {
				calls++
				if err != nil {
					if b != nil {
						t.Errorf("error yielded with a non-nil batch")
					}
					gotErr = err
					continue
				}
				got = append(got, labelsOf(t, b))
			}
			if want := [][]int32{{0, 1, 2}, {3, 4, 5}}; !reflect.DeepEqual(got, want) {
				t.Errorf("batches before the error = %v, want %v", got, want)
			}
			if gotErr == nil || calls != 3 {
				t.Fatalf("got error %v after %d yields; want an error as the 3rd and last yield", gotErr, calls)
			}
			for _, want := range []string{"batch 2", "Get(7)", "broken example"} {
				if !strings.Contains(gotErr.Error(), want) {
					t.Errorf("error %q does not contain %q", gotErr, want)
				}
			}
		})
	}
}

func TestBatchesPanicBecomesError(t *testing.T) {
	for _, workers := range []int{0, 2} {
		ds := Func(4, func(i int) (Example, error) {
			if i == 3 {
				panic("boom")
			}
			return numberedExample(i), nil
		})
		l := &DataLoader{Dataset: ds, BatchSize: 2, Workers: workers}
		var lastErr error
		for _, err := range l.Batches(context.Background(), 0, 0) {
			lastErr = err
		}
		if lastErr == nil || !strings.Contains(lastErr.Error(), "panic") || !strings.Contains(lastErr.Error(), "boom") {
			t.Errorf("workers=%d: last error = %v, want panic error", workers, lastErr)
		}
	}
}

func TestBatchesBatchGetter(t *testing.T) {
	for _, workers := range []int{0, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			ds := &batchGetterDataset{n: 10}
			collateCalls := 0
			l := &DataLoader{Dataset: ds, BatchSize: 3, Workers: workers,
				Collate: func(ex []Example) (*Batch, error) { collateCalls++; return DefaultCollate(ex) }}
			got := collectLabels(t, l, 0, 1)
			if want := [][]int32{{3, 4, 5}, {6, 7, 8}, {9}}; !reflect.DeepEqual(got, want) {
				t.Errorf("batches = %v, want %v", got, want)
			}
			if n := ds.calls.Load(); n != 3 {
				t.Errorf("GetBatch called %d times, want 3", n)
			}
			if collateCalls != 0 {
				t.Errorf("Collate called %d times, want 0 with a BatchGetter", collateCalls)
			}
		})
	}
}

func TestBatchesEarlyBreakStopsGoroutines(t *testing.T) {
	for _, workers := range []int{0, 1, 4, 8} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			before := runtime.NumGoroutine()
			ds := &countingDataset{Slice: numbered(1000), failAt: -1}
			l := &DataLoader{Dataset: ds, BatchSize: 2, Workers: workers, Prefetch: 4}
			seen := 0
			for _, err := range l.Batches(context.Background(), 0, 0) {
				if err != nil {
					t.Fatal(err)
				}
				seen++
				if seen == 3 {
					break
				}
			}
			// When Batches' iterator returns, no worker may still be running:
			// the Get counter must not move any more.
			gets := ds.gets.Load()
			time.Sleep(20 * time.Millisecond)
			if after := ds.gets.Load(); after != gets {
				t.Errorf("Get calls continued after break: %d -> %d", gets, after)
			}
			// At most prefetch window + in-flight batches were built.
			if maxGets := int64(2 * (3 + 4 + workers + 1)); gets > maxGets {
				t.Errorf("%d Get calls after 3 batches, want <= %d (bounded prefetch)", gets, maxGets)
			}
			waitGoroutines(t, before)
		})
	}
}

func TestBatchesContextCancel(t *testing.T) {
	for _, workers := range []int{0, 2} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			before := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			l := &DataLoader{Dataset: numbered(100), BatchSize: 2, Workers: workers}
			ok, yields := 0, 0
			var lastErr error
			for b, err := range l.Batches(ctx, 0, 0) {
				yields++
				if err != nil {
					lastErr = err
					continue
				}
				if b == nil {
					t.Fatal("nil batch without error")
				}
				ok++
				if ok == 2 {
					cancel()
				}
			}
			if !errors.Is(lastErr, context.Canceled) {
				t.Errorf("last error = %v, want context.Canceled", lastErr)
			}
			if ok != 2 || yields != 3 {
				t.Errorf("got %d batches in %d yields, want 2 batches then the ctx error", ok, yields)
			}
			waitGoroutines(t, before)
		})
	}
}

// waitGoroutines fails if the goroutine count does not come back to at most
// want (goroutines that called wg.Done may take a moment to exit).
func waitGoroutines(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > want {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines: %d, want <= %d\n%s", runtime.NumGoroutine(), want, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}
