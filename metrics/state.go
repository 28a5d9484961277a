package metrics

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
)

// ChunkRows is the number of rows one host chunk of a ReduceCat state holds:
// rows are appended into chunks of this size, so the state grows without
// reallocating (and copying) what it already holds.
const ChunkRows = 1 << 16

// State is the host copy of a metric's states: what a checkpoint saves, what
// data-parallel processes merge, and what Compute reads.
type State struct {
	specs []StateSpec
	fixed []*tensors.Tensor // by spec; nil for ReduceCat states
	cat   []*catRows        // by spec; nil for fixed-size states
}

// catRows holds the rows of one ReduceCat state in chunks of ChunkRows rows.
type catRows struct {
	spec   StateSpec
	chunks [][]float64 // float64 and int64 rows alike: int64 values are exact up to 2^53
	rows   int
}

// NewState returns the initial state of u, or an error naming the first
// invalid StateSpec.
func NewState(u Updater) (*State, error) {
	specs := u.States()
	s := &State{specs: specs, fixed: make([]*tensors.Tensor, len(specs)), cat: make([]*catRows, len(specs))}
	seen := map[string]bool{}
	for i, spec := range specs {
		if err := validateSpec(spec); err != nil {
			return nil, fmt.Errorf("state %d: %w", i, err)
		}
		if seen[spec.Name] {
			return nil, fmt.Errorf("state %d: name %q is used twice", i, spec.Name)
		}
		seen[spec.Name] = true
	}
	s.Reset()
	return s, nil
}

// NewStateFrom returns the state of u holding values, one tensor per state in
// States order (ReduceCat states: their rows), e.g. the outputs of
// Bound.BatchState.
func NewStateFrom(u Updater, values []*tensors.Tensor) (*State, error) {
	s, err := NewState(u)
	if err != nil {
		return nil, err
	}
	if len(values) != len(s.specs) {
		return nil, fmt.Errorf("NewStateFrom: %d tensors for %d states", len(values), len(s.specs))
	}
	for i, v := range values {
		if s.specs[i].Reduce == ReduceCat {
			err = s.Append(i, v)
		} else {
			err = s.Set(i, v)
		}
		if err != nil {
			return nil, fmt.Errorf("NewStateFrom: %w", err)
		}
	}
	return s, nil
}

func validateSpec(spec StateSpec) error {
	if spec.Name == "" {
		return fmt.Errorf("StateSpec.Name is empty")
	}
	if spec.DType != dtypes.Int64 && spec.DType != dtypes.Float64 {
		return fmt.Errorf("state %q: DType %s, want Int64 or Float64", spec.Name, spec.DType)
	}
	for _, d := range spec.Dims {
		if d <= 0 {
			return fmt.Errorf("state %q: Dims %v, want positive dimensions", spec.Name, spec.Dims)
		}
	}
	if spec.Reduce < ReduceSum || spec.Reduce > ReduceCat {
		return fmt.Errorf("state %q: Reduce %v, want ReduceSum, ReduceMax, ReduceMin or ReduceCat", spec.Name, spec.Reduce)
	}
	return nil
}

// Specs returns the states' declarations.
func (s *State) Specs() []StateSpec { return s.specs }

// Reset sets every state to its initial value (ReduceCat states to no rows).
func (s *State) Reset() {
	for i, spec := range s.specs {
		if spec.Reduce == ReduceCat {
			s.cat[i] = &catRows{spec: spec}
			continue
		}
		s.fixed[i] = InitialTensor(spec)
	}
}

// InitialTensor returns the initial value of a fixed-size state.
func InitialTensor(spec StateSpec) *tensors.Tensor {
	n := spec.Size()
	if spec.DType == dtypes.Int64 {
		data := make([]int64, n)
		for i := range data {
			data[i] = int64(spec.Init)
		}
		return tensors.FromFlatDataAndDimensions(data, spec.Dims...)
	}
	data := make([]float64, n)
	for i := range data {
		data[i] = spec.Init
	}
	return tensors.FromFlatDataAndDimensions(data, spec.Dims...)
}

// Set replaces fixed-size state i (e.g. with the value read from the
// engine's variable).
func (s *State) Set(i int, t *tensors.Tensor) error {
	spec := s.specs[i]
	if spec.Reduce == ReduceCat {
		return fmt.Errorf("state %q is a ReduceCat state: use Append", spec.Name)
	}
	if err := checkTensor(spec, t, false); err != nil {
		return err
	}
	s.fixed[i] = t
	return nil
}

// Append adds rows (shape [n, Dims...]) to ReduceCat state i.
func (s *State) Append(i int, rows *tensors.Tensor) error {
	spec := s.specs[i]
	if spec.Reduce != ReduceCat {
		return fmt.Errorf("state %q is not a ReduceCat state: use Set", spec.Name)
	}
	if err := checkTensor(spec, rows, true); err != nil {
		return err
	}
	s.cat[i].append(flatFloat64(rows))
	return nil
}

// checkTensor reports whether t has the spec's dtype and shape (with a
// leading row axis when rows is true).
func checkTensor(spec StateSpec, t *tensors.Tensor, rows bool) error {
	if t.DType() != spec.DType {
		return fmt.Errorf("state %q: tensor dtype %s, want %s", spec.Name, t.DType(), spec.DType)
	}
	want := spec.Dims
	dims := t.Shape().Dimensions
	if rows {
		if len(dims) == 0 {
			return fmt.Errorf("state %q: rows are a scalar, want shape [n %v]", spec.Name, spec.Dims)
		}
		dims = dims[1:]
	}
	if len(dims) != len(want) {
		return fmt.Errorf("state %q: tensor shape %v, want %v (rows: %v)", spec.Name, t.Shape().Dimensions, want, rows)
	}
	for k := range want {
		if dims[k] != want[k] {
			return fmt.Errorf("state %q: tensor shape %v, want %v (rows: %v)", spec.Name, t.Shape().Dimensions, want, rows)
		}
	}
	return nil
}

func (c *catRows) append(values []float64) {
	rowSize := c.spec.Size()
	c.rows += len(values) / rowSize
	for len(values) > 0 {
		if len(c.chunks) == 0 || len(c.chunks[len(c.chunks)-1]) == ChunkRows*rowSize {
			c.chunks = append(c.chunks, make([]float64, 0, ChunkRows*rowSize))
		}
		last := &c.chunks[len(c.chunks)-1]
		n := min(len(values), cap(*last)-len(*last))
		*last = append(*last, values[:n]...)
		values = values[n:]
	}
}

// tensor returns every row, concatenated, as one tensor of shape [rows, Dims...].
func (c *catRows) tensor() *tensors.Tensor {
	dims := append([]int{c.rows}, c.spec.Dims...)
	all := make([]float64, 0, c.rows*c.spec.Size())
	for _, ch := range c.chunks {
		all = append(all, ch...)
	}
	if c.spec.DType == dtypes.Int64 {
		ints := make([]int64, len(all))
		for i, v := range all {
			ints[i] = int64(v)
		}
		return tensors.FromFlatDataAndDimensions(ints, dims...)
	}
	return tensors.FromFlatDataAndDimensions(all, dims...)
}

// Rows returns the number of rows ReduceCat state i holds (0 for others).
func (s *State) Rows(i int) int {
	if s.cat[i] == nil {
		return 0
	}
	return s.cat[i].rows
}

// Tensors returns one host tensor per state, in States order, ReduceCat
// states concatenated: what Compute takes.
func (s *State) Tensors() []*tensors.Tensor {
	out := make([]*tensors.Tensor, len(s.specs))
	for i := range s.specs {
		if s.cat[i] != nil {
			out[i] = s.cat[i].tensor()
		} else {
			out[i] = s.fixed[i]
		}
	}
	return out
}

// Merge folds other (a state of the same metric, e.g. another process's)
// into s with each state's Reduction: the result is the state of the union
// of both states' batches.
func (s *State) Merge(other *State) error {
	if len(other.specs) != len(s.specs) {
		return fmt.Errorf("merging states of different metrics: %d states vs %d", len(s.specs), len(other.specs))
	}
	for i, spec := range s.specs {
		o := other.specs[i]
		if o.Name != spec.Name || o.Reduce != spec.Reduce || o.DType != spec.DType {
			return fmt.Errorf("merging state %q with state %q: different metrics", spec.Name, o.Name)
		}
		if spec.Reduce == ReduceCat {
			for _, ch := range other.cat[i].chunks {
				s.cat[i].append(ch)
			}
			continue
		}
		if spec.DType == dtypes.Int64 {
			// Counts stay int64, exact beyond 2^53.
			a, b := tensors.MustCopyFlatData[int64](s.fixed[i]), tensors.MustCopyFlatData[int64](other.fixed[i])
			reduceInto(spec.Reduce, a, b)
			s.fixed[i] = tensors.FromFlatDataAndDimensions(a, spec.Dims...)
			continue
		}
		a, b := flatFloat64(s.fixed[i]), flatFloat64(other.fixed[i])
		reduceInto(spec.Reduce, a, b)
		s.fixed[i] = tensors.FromFlatDataAndDimensions(a, spec.Dims...)
	}
	return nil
}

// reduceInto folds b into a element by element (a and b have the same size:
// both are states of one spec).
func reduceInto[T int64 | float64](r Reduction, a, b []T) {
	for k := range a {
		switch r {
		case ReduceSum:
			a[k] += b[k]
		case ReduceMax:
			a[k] = max(a[k], b[k])
		case ReduceMin:
			a[k] = min(a[k], b[k])
		}
	}
}

// Checkpoint returns every state as a plain tensor by name (ReduceCat states
// concatenated): what a checkpoint file stores.
func (s *State) Checkpoint() map[string]*tensors.Tensor {
	out := map[string]*tensors.Tensor{}
	for i, t := range s.Tensors() {
		out[s.specs[i].Name] = t
	}
	return out
}

// Restore replaces every state with the tensor of the same name in saved
// (written by Checkpoint), or returns an error naming the missing or
// mismatched state.
func (s *State) Restore(saved map[string]*tensors.Tensor) error {
	if len(saved) != len(s.specs) {
		return fmt.Errorf("restoring metric state: %d tensors saved, the metric has %d states", len(saved), len(s.specs))
	}
	for i, spec := range s.specs {
		t, ok := saved[spec.Name]
		if !ok {
			return fmt.Errorf("restoring metric state: state %q is missing", spec.Name)
		}
		if spec.Reduce == ReduceCat {
			if err := checkTensor(spec, t, true); err != nil {
				return fmt.Errorf("restoring metric state: %w", err)
			}
			s.cat[i] = &catRows{spec: spec}
			s.cat[i].append(flatFloat64(t))
			continue
		}
		if err := s.Set(i, t); err != nil {
			return fmt.Errorf("restoring metric state: %w", err)
		}
	}
	return nil
}

// flatFloat64 returns a copy of t's elements as float64.
func flatFloat64(t *tensors.Tensor) []float64 {
	switch t.DType() {
	case dtypes.Float64:
		return tensors.MustCopyFlatData[float64](t)
	case dtypes.Float32:
		return toFloat64(tensors.MustCopyFlatData[float32](t))
	case dtypes.Int64:
		return toFloat64(tensors.MustCopyFlatData[int64](t))
	case dtypes.Int32:
		return toFloat64(tensors.MustCopyFlatData[int32](t))
	}
	panic(fmt.Sprintf("metrics: unsupported host dtype %s", t.DType()))
}

func toFloat64[T float32 | int64 | int32](xs []T) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}
