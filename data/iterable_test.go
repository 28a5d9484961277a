package data

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestIterableBatches(t *testing.T) {
	tests := []struct {
		name     string
		n, bs    int
		dropLast bool
		epoch    int
		skip     int
		want     [][]int32
	}{
		{"10 by 3", 10, 3, false, 0, 0, [][]int32{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}}},
		{"10 by 3 drop last", 10, 3, true, 0, 0, [][]int32{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}},
		{"epoch is passed to Iter", 4, 2, false, 2, 0, [][]int32{{2000, 2001}, {2002, 2003}}},
		{"skip 2", 10, 3, false, 0, 2, [][]int32{{6, 7, 8}, {9}}},
		{"skip 2 drop last", 10, 3, true, 0, 2, [][]int32{{6, 7, 8}}},
		{"skip past the end", 10, 3, false, 0, 9, nil},
		{"empty stream", 0, 3, false, 0, 0, nil},
	}
	for _, tc := range tests {
		for _, workers := range workerCounts {
			t.Run(fmt.Sprintf("%s/workers=%d", tc.name, workers), func(t *testing.T) {
				ds := &streamDataset{n: tc.n, failAt: -1}
				l := &DataLoader{Iterable: ds, BatchSize: tc.bs, DropLast: tc.dropLast, Workers: workers}
				if got := collectLabels(t, l, tc.epoch, tc.skip); !reflect.DeepEqual(got, tc.want) {
					t.Errorf("batches = %v, want %v", got, tc.want)
				}
				if n := ds.active.Load(); n != 0 {
					t.Errorf("%d Iter calls still running", n)
				}
			})
		}
	}
}

func TestIterableErrorAndBreak(t *testing.T) {
	for _, workers := range []int{0, 3} {
		t.Run(fmt.Sprintf("error/workers=%d", workers), func(t *testing.T) {
			l := &DataLoader{Iterable: &streamDataset{n: 10, failAt: 4}, BatchSize: 3, Workers: workers}
			var got [][]int32
			var gotErr error
			for b, err := range l.Batches(context.Background(), 0, 0) {
				if err != nil {
					gotErr = err
					continue
				}
				got = append(got, labelsOf(t, b))
			}
			if want := [][]int32{{0, 1, 2}}; !reflect.DeepEqual(got, want) {
				t.Errorf("batches = %v, want %v", got, want)
			}
			if gotErr == nil || !strings.Contains(gotErr.Error(), "example 4") ||
				!strings.Contains(gotErr.Error(), "stream broke") {
				t.Errorf("error = %v, want the stream error naming example 4", gotErr)
			}
		})
		t.Run(fmt.Sprintf("break/workers=%d", workers), func(t *testing.T) {
			ds := &streamDataset{n: 1000, failAt: -1}
			l := &DataLoader{Iterable: ds, BatchSize: 2, Workers: workers}
			for range l.Batches(context.Background(), 0, 0) {
				break
			}
			if n := ds.active.Load(); n != 0 {
				t.Errorf("%d Iter calls still running after break", n)
			}
		})
	}
}
