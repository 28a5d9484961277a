package volt

import (
	"slices"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/dist"
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

// TestGradReducerMeansMixedDTypes: gradients of both float dtypes, in any
// order, come back as the mean over ranks, each in its own tensor.
func TestGradReducerMeansMixedDTypes(t *testing.T) {
	grads := []*tensors.Tensor{
		tensors.FromFlatDataAndDimensions([]float32{1, 2, 3, 4}, 2, 2),
		tensors.FromFlatDataAndDimensions([]float64{10, 20}, 2),
		tensors.FromFlatDataAndDimensions([]float32{-8}, 1),
	}
	r := &gradReducer{group: twinGroup{dist.Single()}}
	for round := range 2 { // the second round reuses the buffers
		out, err := r.reduce(grads)
		if err != nil {
			t.Fatal(err)
		}
		scale := 1.5
		if round == 1 {
			scale = 1.5 * 1.5
		}
		want32 := [][]float32{{1, 2, 3, 4}, {-8}}
		for i, g := range []*tensors.Tensor{out[0], out[2]} {
			got := tensors.MustCopyFlatData[float32](g)
			for k := range got {
				if w := want32[i][k] * float32(scale); got[k] != w {
					t.Errorf("round %d: float32 gradient %d = %v, want %v", round, i, got, w)
				}
			}
		}
		if got := tensors.MustCopyFlatData[float64](out[1]); !slices.Equal(got, []float64{10 * scale, 20 * scale}) {
			t.Errorf("round %d: float64 gradient = %v, want %v", round, got, []float64{10 * scale, 20 * scale})
		}
	}
	if s := r.stats; s.AllReduces != 2 || s.Values != 14 {
		t.Errorf("stats %+v, want 2 all-reduces of 7 values", s)
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
