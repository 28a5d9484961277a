package data

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func TestCombinedIterable(t *testing.T) {
	tests := []struct {
		name    string
		mode    CombineMode
		loaders []Loader
		want    []string
	}{
		{"min_size stream shorter", MinSize, []Loader{rangeLoader(100, 5), streamLoader(4)},
			[]string{"size=2 a[100 101] b[0 1]", "size=2 a[102 103] b[2 3]"}},
		{"min_size stream longer", MinSize, []Loader{streamLoader(20), rangeLoader(100, 5)},
			[]string{"size=2 a[0 1] b[100 101]", "size=2 a[2 3] b[102 103]", "size=2 a[4 5] b[104]"}},
		{"min_size two streams", MinSize, []Loader{streamLoader(3), streamLoader(6)},
			[]string{"size=2 a[0 1] b[0 1]", "size=1 a[2] b[2 3]"}},
		{"max_size stream", MaxSize, []Loader{streamLoader(3), rangeLoader(100, 6)},
			[]string{"size=2 a[0 1] b[100 101]", "size=1 a[2] b[102 103]", "size=2 b[104 105]"}},
		{"sequential stream first", Sequential, []Loader{streamLoader(3), rangeLoader(100, 3)},
			[]string{"0:[0 1]", "0:[2]", "1:[100 101]", "1:[102]"}},
		{"sequential empty stream", Sequential, []Loader{rangeLoader(100, 3), streamLoader(0), streamLoader(1)},
			[]string{"0:[100 101]", "0:[102]", "2:[0]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &CombinedLoader{Loaders: tc.loaders, Names: []string{"a", "b", "c"}[:len(tc.loaders)], Mode: tc.mode}
			if n := c.NumBatches(); n != -1 {
				t.Errorf("NumBatches() = %d, want -1", n)
			}
			if got := describeAll(t, c, 0, 0); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("batches:\n got %q\nwant %q", got, tc.want)
			}
			checkStreamsStopped(t, tc.loaders)
		})
	}
}

// checkStreamsStopped fails if an Iter call of a streamDataset of the loaders is still running.
func checkStreamsStopped(t *testing.T, loaders []Loader) {
	t.Helper()
	for i, l := range loaders {
		if dl, ok := l.(*DataLoader); ok {
			if s, ok := dl.Iterable.(*streamDataset); ok && s.active.Load() != 0 {
				t.Errorf("loader %d: %d Iter calls still running", i, s.active.Load())
			}
		}
	}
}

func TestCombinedLoaderError(t *testing.T) {
	tests := []struct {
		mode CombineMode
		want []string // batches before the error
	}{
		{MaxSizeCycle, []string{"size=2 a[0 1] b[100 101]", "size=2 a[2 3] b[102 103]"}},
		{MaxSize, []string{"size=2 a[0 1] b[100 101]", "size=2 a[2 3] b[102 103]"}},
		{MinSize, []string{"size=2 a[0 1] b[100 101]", "size=2 a[2 3] b[102 103]"}},
		{Sequential, []string{"0:[0 1]", "0:[2 3]", "0:[4]", "1:[100 101]", "1:[102 103]"}},
	}
	for _, tc := range tests {
		t.Run(string(tc.mode), func(t *testing.T) {
			broken := &countingDataset{Slice: rangeLoader(100, 10).Dataset.(Slice), failAt: 4}
			c := &CombinedLoader{Mode: tc.mode, Names: []string{"a", "b"},
				Loaders: []Loader{rangeLoader(0, 5), &DataLoader{Dataset: broken, BatchSize: 2}}}
			var got []string
			var errs []error
			for b, err := range c.Batches(context.Background(), 0, 0) {
				if err != nil {
					errs = append(errs, err)
					continue
				}
				got = append(got, describe(t, b))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("batches:\n got %q\nwant %q", got, tc.want)
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), `data.CombinedLoader: Loaders[1] ("b"): `) ||
				!strings.Contains(errs[0].Error(), "broken example") {
				t.Errorf("errors = %v, want one error naming Loaders[1] (\"b\") and the dataset error", errs)
			}
		})
	}
}

// workerLoaders returns a map loader of shortN examples and a long one, both
// with workers, and, except for MaxSizeCycle, a long stream loader.
func workerLoaders(mode CombineMode, shortN int) []Loader {
	short, long := rangeLoader(0, shortN), rangeLoader(100, 2000)
	short.Workers, long.Workers, long.Prefetch = 2, 3, 4
	loaders := []Loader{short, long}
	if mode != MaxSizeCycle {
		stream := streamLoader(2000)
		stream.Workers = 1
		loaders = append(loaders, stream)
	}
	return loaders
}

func TestCombinedEarlyBreakStopsLoaders(t *testing.T) {
	for _, mode := range combineModes {
		t.Run(string(mode), func(t *testing.T) {
			before := runtime.NumGoroutine()
			loaders := workerLoaders(mode, 4) // 2 batches
			c := &CombinedLoader{Loaders: loaders, Mode: mode}
			seen := 0
			for _, err := range c.Batches(context.Background(), 0, 0) {
				if err != nil {
					t.Fatal(err)
				}
				if seen++; seen == 3 { // Sequential: inside the second loader
					break
				}
			}
			checkStreamsStopped(t, loaders)
			waitGoroutines(t, before)
		})
	}
}

func TestCombinedContextCancel(t *testing.T) {
	for _, mode := range combineModes {
		for _, cancelAt := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/cancel after %d", mode, cancelAt), func(t *testing.T) {
				before := runtime.NumGoroutine()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				loaders := workerLoaders(mode, 20)
				c := &CombinedLoader{Loaders: loaders, Mode: mode}
				ok, yields := 0, 0
				var lastErr error
				for b, err := range c.Batches(ctx, 0, 0) {
					yields++
					if err != nil {
						lastErr = err
						continue
					}
					if b == nil {
						t.Fatal("nil batch without error")
					}
					if ok++; ok == cancelAt {
						cancel()
					}
				}
				if !errors.Is(lastErr, context.Canceled) {
					t.Errorf("last error = %v, want context.Canceled", lastErr)
				}
				if ok != cancelAt || yields != cancelAt+1 {
					t.Errorf("got %d batches in %d yields, want %d batches then the ctx error", ok, yields, cancelAt)
				}
				checkStreamsStopped(t, loaders)
				waitGoroutines(t, before)
			})
		}
	}
}
