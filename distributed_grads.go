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
// trainer, and its TerminateOnNaN agreements (all zero in a single
// process).
type DistributedStats struct {
	// AllReduces is the number of gradient all-reduces (one per optimizer
	// step; none inside an accumulation window).
	AllReduces int64
	// Values is the number of gradient values reduced, over all calls.
	Values int64
	// Time is the wall time spent in them, copies to and from the packed
	// buffer included, and waiting for the slowest rank to get there.
	Time time.Duration
	// FirstTime is the first all-reduce's share of Time: it includes
	// waiting for every rank to compile its training step.
	FirstTime time.Duration
	// Median is the median time of the last (up to) 1024 all-reduces after
	// the first: robust to the occasional wait for a rank that
	// collects garbage or loads a batch late.
	Median time.Duration
	// Exchange is the median, over the all-reduces Median covers, of the
	// fastest rank's time: what an all-reduce costs the rank that gets
	// there last, that is the exchange without waiting for a slower rank
	// (Median minus Exchange is that waiting). The ranks compare their
	// times when a Fit ends; zero before.
	Exchange time.Duration
	// NonFiniteAgreements is the number of all-reduces in which the ranks
	// agreed whether any found a non-finite value (Config.TerminateOnNaN
	// on several ranks): one per training batch, one per split with
	// Config.TruncatedBPTTSteps.
	NonFiniteAgreements int64
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

// measureExchange sets DistributedStats.Exchange: every rank shares its
// recent all-reduce times (the same all-reduces in the same ring slots on
// every rank) and keeps, for each, the fastest rank's. Every rank calls it
// at the same point of Fit.
func (t *Trainer) measureExchange() error {
	r := t.ddp.reducer
	if !t.ddp.on || r == nil || len(r.recent) == 0 {
		return nil
	}
	mine := make([]float64, len(r.recent))
	for i, d := range r.recent {
		mine[i] = float64(d)
	}
	all, err := t.ddp.group.AllGatherFloat64(mine)
	if err != nil {
		return fmt.Errorf("volt: comparing the ranks' all-reduce times: %w", err)
	}
	fastest := slices.Clone(mine)
	for rank := 1; rank < t.ddp.group.Size(); rank++ {
		for i, v := range all[rank*len(mine) : (rank+1)*len(mine)] {
			fastest[i] = min(fastest[i], v)
		}
	}
	slices.Sort(fastest)
	n := len(fastest)
	r.stats.Exchange = time.Duration((fastest[(n-1)/2] + fastest[n/2]) / 2)
	return nil
}

// recentReduces is how many all-reduce times DistributedStats.Median covers.
const recentReduces = 1024

// gradReducer sums a data-parallel trainer's gradients over the ranks (the
// engine.Reducer's Sum; the gradient program has divided them by the world
// size, so the sums are the means). A large gradient in a buffer the host
// can address is summed where it is; the others are packed into one reused
// buffer per dtype, summed, and written back. dist splits long buffers
// into bounded messages. Every rank gets the same bits, so every rank
// applies the identical update.
type gradReducer struct {
	group dist.Group
	f32   []float32
	f64   []float64
	// inPlace marks, per gradient of the current call, those reduced in
	// their own buffer rather than packed.
	inPlace []bool
	stats   DistributedStats
	// recent holds the times of the last recentReduces all-reduces after
	// the first, as a ring from next.
	recent []time.Duration
	next   int
}

// inPlaceMinValues is the size from which a gradient that lives in a
// host-addressable buffer is all-reduced where it is, in a call of its
// own, rather than copied into the packed buffer and back: from 64 Ki
// values one more MPI call (a few µs) costs less than the two copies.
const inPlaceMinValues = 1 << 16

// sum implements engine.Reducer.Sum.
func (r *gradReducer) sum(grads []*tensors.Tensor) ([]*tensors.Tensor, error) {
	start := time.Now()
	total := 0
	r.inPlace = r.inPlace[:0]
	for i, g := range grads {
		if dt := g.DType(); dt != dtypes.Float32 && dt != dtypes.Float64 {
			return nil, fmt.Errorf("gradient %d has dtype %s; the data-parallel all-reduce takes float32 or float64 "+
				"(half-precision models train with float32 master weights: Precision \"bf16-mixed\" or \"16-mixed\")", i, dt)
		}
		total += g.Size()
		r.inPlace = append(r.inPlace, g.Size() >= inPlaceMinValues && sharedOnDevice(g))
	}
	var err error
	if r.f32, err = sumOverRanks(grads, r.inPlace, r.f32, r.group.AllReduceFloat32); err != nil {
		return nil, err
	}
	if r.f64, err = sumOverRanks(grads, r.inPlace, r.f64, r.group.AllReduceFloat64); err != nil {
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
	r.stats.Values += int64(total)
	r.stats.Time += took
	return grads, nil
}

// sumOverRanks sums, with allReduce, the gradients of grads that hold T
// values: those marked in inPlace in their own buffer (ConstFlatData hands
// out a shared buffer itself, see sharedOnDevice), the others packed, in
// order, into packed (grown as needed and returned, for reuse) and written
// back. A gradient written back that lives only in a shared buffer (the
// gradient program's output on the Go backend) is written in place, so the
// apply program reads it without a transfer; any other goes through
// MutableFlatData, which moves it to the host and drops its device copy.
func sumOverRanks[T float32 | float64](grads []*tensors.Tensor, inPlace []bool, packed []T,
	allReduce func([]T, dist.Op) error) ([]T, error) {
	dtype := dtypes.FromGenericsType[T]()
	n := 0
	for i, g := range grads {
		if g.DType() == dtype && !inPlace[i] {
			n += g.Size()
		}
	}
	packed = slices.Grow(packed[:0], n)[:n]
	off := 0
	for i, g := range grads {
		if g.DType() != dtype || inPlace[i] {
			continue
		}
		if err := tensors.ConstFlatData(g, func(flat []T) { off += copy(packed[off:], flat) }); err != nil {
			return packed, fmt.Errorf("reading gradient %d: %w", i, err)
		}
	}
	if n > 0 {
		if err := allReduce(packed, dist.Sum); err != nil {
			return packed, err
		}
	}
	off = 0
	for i, g := range grads {
		if g.DType() != dtype {
			continue
		}
		var err, mpiErr error
		switch {
		case inPlace[i]:
			err = tensors.ConstFlatData(g, func(flat []T) { mpiErr = allReduce(flat, dist.Sum) })
		case sharedOnDevice(g):
			err = tensors.ConstFlatData(g, func(flat []T) { off += copy(flat, packed[off:]) })
		default:
			err = tensors.MutableFlatData(g, func(flat []T) { off += copy(flat, packed[off:]) })
		}
		if err = cmp.Or(err, mpiErr); err != nil {
			return packed, fmt.Errorf("summing gradient %d over the ranks: %w", i, err)
		}
	}
	return packed, nil
}

// sharedOnDevice reports whether t's only storage is a backend buffer the
// host can address: ConstFlatData then hands out that buffer itself, and
// writing into it changes what the next program reads.
func sharedOnDevice(t *tensors.Tensor) bool {
	if t.HasLocal() {
		return false
	}
	backend, err := t.Backend()
	return err == nil && backend != nil && backend.HasSharedBuffers()
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
