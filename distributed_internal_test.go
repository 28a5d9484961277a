package volt

import (
	"slices"
	"testing"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/dist"
	"github.com/voltml/volt/internal/engine"
)

// twinGroup is a Group of 2 ranks whose other rank always holds twice this
// rank's values: a sum triples them, a max or min picks between v and 2v.
type twinGroup struct{ dist.Group }

func (twinGroup) Size() int { return 2 }

func (twinGroup) AllReduceFloat32(buf []float32, op dist.Op) error {
	for i, v := range buf {
		if op == dist.Sum {
			buf[i] = v + 2*v
		} else {
			buf[i] = max(v, 2*v)
		}
	}
	return nil
}

func (twinGroup) AllReduceFloat64(buf []float64, op dist.Op) error {
	for i, v := range buf {
		switch op {
		case dist.Sum:
			buf[i] = v + 2*v
		case dist.Max:
			buf[i] = max(v, 2*v)
		default:
			buf[i] = min(v, 2*v)
		}
	}
	return nil
}

// TestGradReducerSumsMixedDTypes: gradients of both float dtypes, in any
// order, small ones (packed) and large ones in host-addressable backend
// buffers (summed where they are), come back as the sum over the ranks,
// each in its own tensor; the large ones in the very buffer they came in.
func TestGradReducerSumsMixedDTypes(t *testing.T) {
	backend, err := engine.Backend("")
	if err != nil {
		t.Fatal(err)
	}
	large32, err := tensors.FromShapeForBackend(backend, 0, shapes.Make(dtypes.Float32, inPlaceMinValues))
	if err != nil {
		t.Fatal(err)
	}
	large64, err := tensors.FromShapeForBackend(backend, 0, shapes.Make(dtypes.Float64, 2, inPlaceMinValues/2))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*tensors.Tensor{large32, large64} {
		if !sharedOnDevice(g) {
			t.Fatalf("a %s tensor in a %s buffer is not shared: the in-place path goes untested", g.Shape(), backend.Name())
		}
	}
	tensors.MustMutableFlatData(large32, func(flat []float32) {
		for i := range flat {
			flat[i] = float32(i % 7)
		}
	})
	tensors.MustMutableFlatData(large64, func(flat []float64) {
		for i := range flat {
			flat[i] = float64(i%5) / 4
		}
	})
	var base32 *float32
	tensors.MustConstFlatData(large32, func(flat []float32) { base32 = &flat[0] })
	grads := []*tensors.Tensor{
		tensors.FromFlatDataAndDimensions([]float32{1, 2, 3, 4}, 2, 2),
		large32,
		tensors.FromFlatDataAndDimensions([]float64{10, 20}, 2),
		large64,
		tensors.FromFlatDataAndDimensions([]float32{-8}, 1),
	}
	r := &gradReducer{group: twinGroup{dist.Single()}}
	for round := range 2 { // the second round reuses the buffers
		out, err := r.sum(grads)
		if err != nil {
			t.Fatal(err)
		}
		times := 3.0 // this rank's value and the twin's, twice as large
		if round == 1 {
			times = 3 * 3
		}
		want32 := [][]float32{{1, 2, 3, 4}, {-8}}
		for i, g := range []*tensors.Tensor{out[0], out[4]} {
			got := tensors.MustCopyFlatData[float32](g)
			for k := range got {
				if w := want32[i][k] * float32(times); got[k] != w {
					t.Errorf("round %d: float32 gradient %d = %v, want %v", round, i, got, w)
				}
			}
		}
		if got := tensors.MustCopyFlatData[float64](out[2]); !slices.Equal(got, []float64{10 * times, 20 * times}) {
			t.Errorf("round %d: float64 gradient = %v, want %v", round, got, []float64{10 * times, 20 * times})
		}
		if out[1] != large32 || out[3] != large64 {
			t.Fatalf("round %d: the large gradients came back as other tensors", round)
		}
		tensors.MustConstFlatData(large32, func(flat []float32) {
			if &flat[0] != base32 {
				t.Errorf("round %d: the large float32 gradient moved to another buffer", round)
			}
			for i, v := range flat {
				if w := float32(i%7) * float32(times); v != w {
					t.Fatalf("round %d: large float32 gradient[%d] = %v, want %v", round, i, v, w)
				}
			}
		})
		tensors.MustConstFlatData(large64, func(flat []float64) {
			for i, v := range flat {
				if w := float64(i%5) / 4 * times; v != w {
					t.Fatalf("round %d: large float64 gradient[%d] = %v, want %v", round, i, v, w)
				}
			}
		})
	}
	if s, want := r.stats, int64(2*(7+2*inPlaceMinValues)); s.AllReduces != 2 || s.Values != want {
		t.Errorf("stats %+v, want 2 all-reduces of %d values in all", s, want)
	}
}

// TestSyncedEpochValues: a scalar logged with SyncDist gets, per
// reduction, the value over both ranks' steps.
func TestSyncedEpochValues(t *testing.T) {
	for _, tc := range []struct {
		reduce Reduction
		want   float64
	}{
		// this rank: values 1 (batch 4) and 3 (batch 2), Σv·bs = 10 over
		// 6 samples; the twin has twice every accumulator: Σv·bs = 20 over
		// 12 samples, Σv = 8, max 6, min 2.
		{Mean, (10 + 20) / 18.0},
		{Sum, 1 + 3 + 8},
		{Max, 6},
		{Min, 1},
	} {
		r := newResults()
		m, err := r.entry("v", logOptions{onEpoch: true, reduce: tc.reduce, syncDist: true})
		if err != nil {
			t.Fatal(err)
		}
		m.add(1, 4)
		m.add(3, 2)
		var b syncBuffers
		e := syncEntry{Key: "v"}
		if err := b.pack(m, e); err != nil {
			t.Fatal(err)
		}
		if err := b.allReduce(twinGroup{dist.Single()}); err != nil {
			t.Fatal(err)
		}
		if err := b.unpack(m, e); err != nil {
			t.Fatal(err)
		}
		if got := m.epochValue(); got != tc.want {
			t.Errorf("%s: epoch value %v, want %v", tc.reduce, got, tc.want)
		}
	}
}

// AllGatherFloat64 gives this rank's values, then the twin's (twice them).
func (twinGroup) AllGatherFloat64(values []float64) ([]float64, error) {
	out := slices.Clone(values)
	for _, v := range values {
		out = append(out, 2*v)
	}
	return out, nil
}

// TestMeasureExchange: Exchange is the median over the all-reduces of the
// fastest rank's time, here this rank's (the twin always took twice as
// long), not the median of the slower rank's.
func TestMeasureExchange(t *testing.T) {
	tr := &Trainer{}
	tr.ddp.on, tr.ddp.group = true, twinGroup{dist.Single()}
	tr.ddp.reducer = &gradReducer{group: tr.ddp.group,
		recent: []time.Duration{5 * time.Microsecond, 1 * time.Microsecond, 9 * time.Microsecond, 3 * time.Microsecond}}
	if err := tr.measureExchange(); err != nil {
		t.Fatal(err)
	}
	if got, want := tr.DistributedStats().Exchange, 4*time.Microsecond; got != want {
		t.Errorf("Exchange = %v, want %v (the median of 1, 3, 5, 9 µs)", got, want)
	}
}
