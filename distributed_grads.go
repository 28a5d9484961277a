package volt

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/dist"
)

// DistributedStats counts the gradient all-reduces of a data-parallel
// trainer (all zero in a single process).
type DistributedStats struct {
	// AllReduces is the number of gradient all-reduces (one per optimizer
	// step; none inside an accumulation window).
	AllReduces int64
	// Values is the number of gradient values reduced, over all calls.
	Values int64
	// Time is the wall time spent in them, packing and scaling included,
	// and waiting for the slowest rank to get there.
	Time time.Duration
	// FirstTime is the first all-reduce's share of Time: it includes
	// waiting for every rank to compile its training step.
	FirstTime time.Duration
	// Median is the median time of the last (up to) 1024 all-reduces after
	// the first: robust to the occasional wait for a rank that
	// collects garbage or loads a batch late.
	Median time.Duration
}

// DistributedStats returns the gradient all-reduce counters of this
// trainer's runs so far.
func (t *Trainer) DistributedStats() DistributedStats {
	if t.ddp.reducer == nil {
		return DistributedStats{}
	}
	stats := t.ddp.reducer.stats
	if n := len(t.ddp.reducer.recent); n > 0 {
		sorted := slices.Sorted(slices.Values(t.ddp.reducer.recent))
		stats.Median = (sorted[(n-1)/2] + sorted[n/2]) / 2
	}
	return stats
}

// recentReduces is how many all-reduce times DistributedStats.Median covers.
const recentReduces = 1024

// gradReducer is the engine.Reducer of a data-parallel trainer: it packs
// the gradients into one reused buffer per dtype, sums them across ranks
// in place (dist splits long buffers into bounded messages), scales by
// 1/world size and writes them back. Every rank gets the same bits, so
// every rank applies the identical update.
type gradReducer struct {
	group dist.Group
	f32   []float32
	f64   []float64
	stats DistributedStats
	// recent holds the times of the last recentReduces all-reduces after
	// the first, as a ring from next.
	recent []time.Duration
	next   int
}

// reduce implements engine.Reducer.
func (r *gradReducer) reduce(grads []*tensors.Tensor) ([]*tensors.Tensor, error) {
	start := time.Now()
	n32, n64 := 0, 0
	for i, g := range grads {
		switch g.DType() {
		case dtypes.Float32:
			n32 += g.Size()
		case dtypes.Float64:
			n64 += g.Size()
		default:
			return nil, fmt.Errorf("gradient %d has dtype %s; the data-parallel all-reduce takes float32 or float64 "+
				"(half-precision models train with float32 master weights: Precision \"bf16-mixed\" or \"16-mixed\")", i, g.DType())
		}
	}
	r.f32 = slices.Grow(r.f32[:0], n32)[:n32]
	r.f64 = slices.Grow(r.f64[:0], n64)[:n64]
	if err := packGradients(grads, r.f32, r.f64); err != nil {
		return nil, err
	}
	if n32 > 0 {
		if err := r.group.AllReduceFloat32(r.f32, dist.Sum); err != nil {
			return nil, err
		}
		scale := 1 / float32(r.group.Size())
		for i := range r.f32 {
			r.f32[i] *= scale
		}
	}
	if n64 > 0 {
		if err := r.group.AllReduceFloat64(r.f64, dist.Sum); err != nil {
			return nil, err
		}
		scale := 1 / float64(r.group.Size())
		for i := range r.f64 {
			r.f64[i] *= scale
		}
	}
	if err := unpackGradients(grads, r.f32, r.f64); err != nil {
		return nil, err
	}
	took := time.Since(start)
	switch {
	case r.stats.AllReduces == 0:
		r.stats.FirstTime = took
	case len(r.recent) < recentReduces:
		r.recent = append(r.recent, took)
	default:
		r.recent[r.next] = took
		r.next = (r.next + 1) % recentReduces
	}
	r.stats.AllReduces++
	r.stats.Values += int64(n32 + n64)
	r.stats.Time += took
	return grads, nil
}

// packGradients copies the gradients, in order, into f32 and f64.
func packGradients(grads []*tensors.Tensor, f32 []float32, f64 []float64) error {
	o32, o64 := 0, 0
	for _, g := range grads {
		var err error
		if g.DType() == dtypes.Float32 {
			err = tensors.ConstFlatData(g, func(flat []float32) { o32 += copy(f32[o32:], flat) })
		} else {
			err = tensors.ConstFlatData(g, func(flat []float64) { o64 += copy(f64[o64:], flat) })
		}
		if err != nil {
			return fmt.Errorf("reading a gradient: %w", err)
		}
	}
	return nil
}

// unpackGradients copies f32 and f64 back into the gradients.
func unpackGradients(grads []*tensors.Tensor, f32 []float32, f64 []float64) error {
	o32, o64 := 0, 0
	for _, g := range grads {
		var err error
		if g.DType() == dtypes.Float32 {
			err = tensors.MutableFlatData(g, func(flat []float32) { o32 += copy(flat, f32[o32:]) })
		} else {
			err = tensors.MutableFlatData(g, func(flat []float64) { o64 += copy(flat, f64[o64:]) })
		}
		if err != nil {
			return fmt.Errorf("writing a reduced gradient: %w", err)
		}
	}
	return nil
}

// broadcastVariables makes every variable that has a value equal to rank
// 0's (Lightning's DDP wrap broadcasts rank 0's parameters): modules that
// initialise from a per-rank seed, or hooks that changed weights on one
// rank, start from the same point. It returns how many variables differed
// on this rank.
func (t *Trainer) broadcastVariables() (int, error) {
	if !t.ddp.on {
		return 0, nil
	}
	vars := valuedVariables(t.eng.Store)
	var header, payload bytes.Buffer
	for _, v := range vars {
		fmt.Fprintf(&header, "%s %s\n", v.Path(), v.Shape())
		value, err := v.Value()
		if err != nil {
			return 0, fmt.Errorf("variable %s: %w", v.Path(), err)
		}
		if err := value.ConstBytes(func(b []byte) { payload.Write(b) }); err != nil {
			return 0, fmt.Errorf("variable %s: %w", v.Path(), err)
		}
	}
	root, err := dist.BroadcastBytes(t.ddp.group, header.Bytes(), 0)
	if err != nil {
		return 0, fmt.Errorf("broadcasting the variables' names: %w", err)
	}
	same := bytes.Equal(root, header.Bytes())
	agreed, err := dist.AnyTrue(t.ddp.group, !same)
	if err != nil {
		return 0, err
	}
	if agreed {
		return 0, fmt.Errorf("the ranks' models have different variables (rank %d has\n%s\nrank 0 has\n%s); every rank must build the same module",
			t.ddp.group.Rank(), header.Bytes(), root)
	}
	data, err := dist.BroadcastBytes(t.ddp.group, payload.Bytes(), 0)
	if err != nil {
		return 0, fmt.Errorf("broadcasting rank 0's weights: %w", err)
	}
	if t.ddp.group.Rank() == 0 {
		return 0, nil
	}
	differ := 0
	for _, v := range vars {
		value, _ := v.Value()
		n := value.Shape().ByteSize()
		mine, theirs := payload.Next(int(n)), data[:n]
		data = data[n:]
		if bytes.Equal(mine, theirs) {
			continue
		}
		differ++
		fresh := tensors.FromShape(value.Shape())
		if err := fresh.MutableBytes(func(b []byte) { copy(b, theirs) }); err != nil {
			return 0, err
		}
		if err := v.SetValue(fresh); err != nil {
			return 0, fmt.Errorf("setting %s to rank 0's value: %w", v.Path(), err)
		}
	}
	return differ, nil
}

// valuedVariables returns the store's variables that have a value, by path.
func valuedVariables(store *model.Store) []*model.Variable {
	var vars []*model.Variable
	for v := range store.IterVariables() {
		if v.HasValue() {
			vars = append(vars, v)
		}
	}
	slices.SortFunc(vars, func(a, b *model.Variable) int { return cmp.Compare(a.Path(), b.Path()) })
	return vars
}
