package volt

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"testing"

	"github.com/voltml/volt/data"
)

// countingLoader yields n batches (Size = index) from skip on, failing at
// batch failAt (-1: never) or yielding nil there when nilAt, and counts the
// batches pulled and whether the consumer stopped the iteration.
type countingLoader struct {
	n, failAt int
	nilAt     bool
	pulled    []int
	stopped   bool
}

func (l *countingLoader) NumBatches() int { return l.n }

func (l *countingLoader) Batches(_ context.Context, _, skip int) iter.Seq2[*data.Batch, error] {
	return func(yield func(*data.Batch, error) bool) {
		for i := skip; i < l.n; i++ {
			l.pulled = append(l.pulled, i)
			var b *data.Batch
			var err error
			switch {
			case i == l.failAt && l.nilAt:
			case i == l.failAt:
				err = fmt.Errorf("batch %d broken", i)
			default:
				b = &data.Batch{Size: i}
			}
			if !yield(b, err) {
				l.stopped = true
				return
			}
		}
	}
}

// The pass's batches, last flags and loader reads, for a look-ahead pass
// (training) and one without (evaluation), against the loops they replace:
// training pulls one batch ahead and never past the limit; evaluation pulls
// a batch, then checks the limit (so it reads one batch past it).
func TestEpochIterator(t *testing.T) {
	tests := []struct {
		name         string
		n, skip      int
		limit        int
		lookAhead    bool
		failAt       int
		nilAt        bool
		steps        []string // "batch/last" per Next before the pass ends
		wantErr      string
		wantPulls    []int
		pullsAtFirst []int // the reads once the first batch is handed out
	}{
		{name: "all, look-ahead", n: 3, limit: -1, lookAhead: true, failAt: -1,
			steps: []string{"0/false", "1/false", "2/true"}, wantPulls: []int{0, 1, 2}, pullsAtFirst: []int{0, 1}},
		{name: "limit, look-ahead: no pull past it", n: 5, limit: 2, lookAhead: true, failAt: -1,
			steps: []string{"0/false", "1/true"}, wantPulls: []int{0, 1}, pullsAtFirst: []int{0, 1}},
		{name: "resumed from skip, look-ahead", n: 4, skip: 2, limit: -1, lookAhead: true, failAt: -1,
			steps: []string{"2/false", "3/true"}, wantPulls: []int{2, 3}, pullsAtFirst: []int{2, 3}},
		{name: "absolute limit from skip", n: 6, skip: 2, limit: 4, lookAhead: true, failAt: -1,
			steps: []string{"2/false", "3/true"}, wantPulls: []int{2, 3}, pullsAtFirst: []int{2, 3}},
		{name: "empty pass", n: 0, limit: -1, lookAhead: true, failAt: -1, wantPulls: nil},
		{name: "error after a batch, look-ahead", n: 4, limit: -1, lookAhead: true, failAt: 1,
			steps: []string{"0/false"}, wantErr: "batch 1 broken", wantPulls: []int{0, 1}, pullsAtFirst: []int{0, 1}},
		{name: "nil batch", n: 4, limit: -1, lookAhead: true, failAt: 0, nilAt: true,
			wantErr: errNilBatch.Error(), wantPulls: []int{0}},
		{name: "all, no look-ahead", n: 3, limit: -1, failAt: -1,
			steps: []string{"0/false", "1/false", "2/false"}, wantPulls: []int{0, 1, 2}, pullsAtFirst: []int{0}},
		{name: "limit, no look-ahead: one read past it", n: 5, limit: 2, failAt: -1,
			steps: []string{"0/false", "1/true"}, wantPulls: []int{0, 1, 2}, pullsAtFirst: []int{0}},
		{name: "limit 0, no look-ahead", n: 5, limit: 0, failAt: -1, wantPulls: []int{0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &countingLoader{n: tc.n, failAt: tc.failAt, nilAt: tc.nilAt}
			tr := &Trainer{run: &run{}}
			it := tr.openEpoch(context.Background(), actTrainNext, l, 0, tc.skip, tc.limit, tc.lookAhead)
			if _, _, ok := it.first(); ok != (tc.n > tc.skip) {
				t.Errorf("first: ok %v with %d batches from %d", ok, tc.n, tc.skip)
			}
			var steps []string
			var err error
			for i := 0; ; i++ {
				var b *data.Batch
				var last bool
				b, last, err = it.Next()
				if i == 0 && b != nil && !slices.Equal(l.pulled, tc.pullsAtFirst) {
					t.Errorf("reads when the first batch is handed out: %v, want %v", l.pulled, tc.pullsAtFirst)
				}
				if b == nil || err != nil {
					break
				}
				steps = append(steps, fmt.Sprintf("%d/%v", b.Size, last))
				if last && tc.lookAhead {
					break // the fit loop stops at the last batch
				}
			}
			if b, _, again := it.Next(); b != nil || again != nil {
				t.Errorf("Next after the end: %v, %v; want nil, nil", b, again)
			}
			it.close()
			if !slices.Equal(steps, tc.steps) {
				t.Errorf("batches %v, want %v", steps, tc.steps)
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			if tc.nilAt && !errors.Is(err, errNilBatch) {
				t.Errorf("error %v is not errNilBatch", err)
			}
			if !slices.Equal(l.pulled, tc.wantPulls) {
				t.Errorf("loader reads %v, want %v", l.pulled, tc.wantPulls)
			}
		})
	}
}
