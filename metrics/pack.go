package metrics

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
)

// Packed is every fixed-size state of one Reduction and dtype, flattened
// into one buffer in States order: what one all-reduce call (e.g.
// MPI_Allreduce with the matching op) takes, so that syncing a metric
// collection across processes costs at most one call per (reduction, dtype)
// pair (typically two: int64 counts and float64 sums), plus an all-gather per
// ReduceCat state.
type Packed struct {
	Reduce  Reduction
	DType   dtypes.DType
	Int64   []int64   // when DType is Int64
	Float64 []float64 // when DType is Float64
}

// packKey orders the buffers of Pack.
var packKeys = []struct {
	reduce Reduction
	dtype  dtypes.DType
}{
	{ReduceSum, dtypes.Int64}, {ReduceSum, dtypes.Float64},
	{ReduceMax, dtypes.Int64}, {ReduceMax, dtypes.Float64},
	{ReduceMin, dtypes.Int64}, {ReduceMin, dtypes.Float64},
}

// Pack returns the fixed-size states packed by reduction and dtype (only
// non-empty buffers, in a fixed order: every process of one metric gets the
// same layout).
func (s *State) Pack() []Packed {
	var out []Packed
	for _, key := range packKeys {
		p := Packed{Reduce: key.reduce, DType: key.dtype}
		for i, spec := range s.specs {
			if spec.Reduce != key.reduce || spec.DType != key.dtype {
				continue
			}
			if key.dtype == dtypes.Int64 {
				p.Int64 = append(p.Int64, tensors.MustCopyFlatData[int64](s.fixed[i])...)
			} else {
				p.Float64 = append(p.Float64, flatFloat64(s.fixed[i])...)
			}
		}
		if len(p.Int64)+len(p.Float64) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// Unpack sets the fixed-size states from buffers laid out as Pack lays them
// (e.g. after the all-reduce), or returns an error naming the mismatch.
func (s *State) Unpack(packed []Packed) error {
	want := s.Pack()
	if len(packed) != len(want) {
		return fmt.Errorf("Unpack: %d buffers, the metric packs %d", len(packed), len(want))
	}
	for k, p := range packed {
		w := want[k]
		if p.Reduce != w.Reduce || p.DType != w.DType || len(p.Int64) != len(w.Int64) || len(p.Float64) != len(w.Float64) {
			return fmt.Errorf("Unpack: buffer %d is %v %s of %d elements, want %v %s of %d",
				k, p.Reduce, p.DType, len(p.Int64)+len(p.Float64), w.Reduce, w.DType, len(w.Int64)+len(w.Float64))
		}
		offset := 0
		for i, spec := range s.specs {
			if spec.Reduce != p.Reduce || spec.DType != p.DType {
				continue
			}
			n := spec.Size()
			if p.DType == dtypes.Int64 {
				s.fixed[i] = tensors.FromFlatDataAndDimensions(append([]int64(nil), p.Int64[offset:offset+n]...), spec.Dims...)
			} else {
				s.fixed[i] = tensors.FromFlatDataAndDimensions(append([]float64(nil), p.Float64[offset:offset+n]...), spec.Dims...)
			}
			offset += n
		}
	}
	return nil
}
