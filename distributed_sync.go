package volt

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/dist"
	"github.com/voltml/volt/metrics"
)

// SyncDist reduces a logged value across the ranks of a data-parallel job
// (Lightning's sync_dist=True) with its Reduce: the epoch value of Mean is
// Σ value·batch size over every rank's steps ÷ Σ batch size (so an
// evaluation epoch's value equals one process's over the whole set), Sum
// adds every rank's sum, Max and Min take the extreme over ranks. A
// training step value becomes the mean (sum, max, min) of the ranks' step
// values. Without it each rank keeps its own values and only rank 0's reach
// the loggers. Metric objects (Step.LogMetric) are always reduced, by their
// states, before their epoch value is computed. In a single process it
// changes nothing.
var SyncDist LogOption = func(o *logOptions) { o.syncDist = true }

// syncStepValue replaces m's step value by its reduction across ranks
// (training only: evaluation loaders give ranks different batch counts, so
// their values are reduced at the epoch's end). The epoch accumulators keep
// the local value; syncResults reduces them.
func (l *logging) syncStepValue(m *metric) error {
	if l.state.Stage != RunningTrain {
		return nil
	}
	buf := []float64{m.step}
	op := dist.Sum
	switch m.opts.reduce {
	case Max:
		op = dist.Max
	case Min:
		op = dist.Min
	}
	if err := l.ddp.group.AllReduceFloat64(buf, op); err != nil {
		return fmt.Errorf("syncing logged value %q across ranks: %w", m.key, err)
	}
	m.step = buf[0]
	if m.opts.reduce == Mean {
		m.step /= float64(l.ddp.group.Size())
	}
	return nil
}

// syncEntry is one epoch value reduced across ranks: a scalar logged with
// SyncDist, or the states of a metric object (fixed-size states are
// all-reduced, growing ones gathered).
type syncEntry struct {
	Key    string
	States []syncState `json:",omitempty"` // a metric object's fixed-size states
}

// syncState is the layout of one metric state.
type syncState struct {
	Reduce metrics.Reduction
	Int    bool
	Size   int
}

// syncBuffers gathers the values of one all-reduce per (reduction, dtype).
type syncBuffers struct {
	f [3][]float64 // by dist.Op
	i [3][]int64
}

// syncResults reduces r's epoch accumulators across ranks before the epoch
// values are computed: scalars logged with SyncDist, and the state of every
// metric object (logged or only updated, so that Trainer.MetricValue at
// the epoch's end and after the run covers every rank's shard). Rank 0's list of entries is used on every rank (a rank
// whose loader gave no batches contributes nothing), so the ranks make the
// same calls.
func (l *logging) syncResults(r *results) error {
	if !l.ddp.on {
		return nil
	}
	var local []syncEntry
	done := map[*metricSource]bool{}
	for _, m := range r.order {
		switch {
		case m.src != nil:
			// Every metric object, logged per epoch or not: Trainer.MetricValue
			// (UpdateMetric's confusion matrices, curves) reads the state too.
			if done[m.src] {
				continue
			}
			done[m.src] = true
			e := syncEntry{Key: m.key}
			for _, spec := range m.src.updater.States() {
				e.States = append(e.States, syncState{Reduce: spec.Reduce, Int: spec.DType == dtypes.Int64, Size: spec.Size()})
			}
			local = append(local, e)
		case !m.opts.onEpoch:
		case m.opts.syncDist:
			local = append(local, syncEntry{Key: m.key})
		case m.seen:
			l.sayOnce("sync-dist-"+m.key, fmt.Sprintf("volt: %q is logged per epoch without volt.SyncDist: each rank keeps its own value "+
				"and only rank 0's is logged; add volt.SyncDist to reduce it across the %d ranks", m.key, l.ddp.group.Size()))
		}
	}
	msg, err := json.Marshal(local)
	if err != nil {
		return err
	}
	if msg, err = dist.BroadcastBytes(l.ddp.group, msg, 0); err != nil {
		return fmt.Errorf("syncing logged values: %w", err)
	}
	var entries []syncEntry
	if err := json.Unmarshal(msg, &entries); err != nil {
		return fmt.Errorf("syncing logged values: rank 0's list: %w", err)
	}
	var b syncBuffers
	for _, e := range entries {
		if err := b.pack(r.byKey[e.Key], e); err != nil {
			return err
		}
	}
	if err := b.allReduce(l.ddp.group); err != nil {
		return fmt.Errorf("syncing logged values across ranks: %w", err)
	}
	for _, e := range entries {
		if err := b.unpack(r.byKey[e.Key], e); err != nil {
			return err
		}
		if err := gatherRows(l.ddp.group, r.byKey[e.Key], e); err != nil {
			return fmt.Errorf("syncing logged metric %q across ranks: %w", e.Key, err)
		}
	}
	return nil
}

// gatherRows replaces the rows of m's growing (ReduceCat) states by every
// rank's, concatenated in rank order (torchmetrics' all-gather of "cat"
// states). A rank without m contributes no rows and keeps none.
func gatherRows(g dist.Group, m *metric, e syncEntry) error {
	var src *metricSource
	if m != nil && m.seen && m.src != nil && m.src.rows != nil {
		src = m.src
	}
	gathered := map[int][]float64{}
	for i, s := range e.States {
		if s.Reduce != metrics.ReduceCat {
			continue
		}
		var own []float64
		if src != nil && i < len(src.specs) {
			own = flatAsFloat64(src.rows.Tensors()[i])
		}
		lengths, err := g.AllGatherInt64([]int64{int64(len(own))})
		if err != nil {
			return err
		}
		longest := int(slices.Max(lengths))
		padded := make([]float64, longest)
		copy(padded, own)
		all, err := g.AllGatherFloat64(padded)
		if err != nil {
			return err
		}
		var rows []float64
		for r, n := range lengths {
			rows = append(rows, all[r*longest:r*longest+int(n)]...)
		}
		gathered[i] = rows
	}
	if src == nil || len(gathered) == 0 {
		return nil
	}
	merged, err := metrics.NewState(src.updater)
	if err != nil {
		return err
	}
	for i, rows := range gathered {
		spec := src.specs[i]
		dims := append([]int{len(rows) / max(spec.Size(), 1)}, spec.Dims...)
		value := tensors.FromFlatDataAndDimensions(rows, dims...)
		if spec.DType == dtypes.Int64 {
			ints := make([]int64, len(rows))
			for k, v := range rows {
				ints[k] = int64(v)
			}
			value = tensors.FromFlatDataAndDimensions(ints, dims...)
		}
		if err := merged.Append(i, value); err != nil {
			return err
		}
	}
	*src.rows = *merged // shared by every graph's source of the metric
	return nil
}

// flatAsFloat64 returns a float64 or int64 tensor's values as float64.
func flatAsFloat64(t *tensors.Tensor) []float64 {
	if t.DType() == dtypes.Int64 {
		ints := tensors.MustCopyFlatData[int64](t)
		out := make([]float64, len(ints))
		for i, v := range ints {
			out[i] = float64(v)
		}
		return out
	}
	return tensors.MustCopyFlatData[float64](t)
}

// opOf returns the dist.Op of a metric state reduction.
func opOf(r metrics.Reduction) (dist.Op, error) {
	switch r {
	case metrics.ReduceSum:
		return dist.Sum, nil
	case metrics.ReduceMax:
		return dist.Max, nil
	case metrics.ReduceMin:
		return dist.Min, nil
	}
	return 0, fmt.Errorf("metric state reduction %s cannot be all-reduced", r)
}

// pack appends m's contribution to e (the identity of each reduction when
// this rank has no such value).
func (b *syncBuffers) pack(m *metric, e syncEntry) error {
	if e.States == nil {
		if m == nil || !m.seen {
			b.f[dist.Sum] = append(b.f[dist.Sum], 0, 0)
			b.f[dist.Min] = append(b.f[dist.Min], math.Inf(1))
			b.f[dist.Max] = append(b.f[dist.Max], math.Inf(-1))
			return nil
		}
		b.f[dist.Sum] = append(b.f[dist.Sum], m.sum, m.weight)
		b.f[dist.Min] = append(b.f[dist.Min], m.min)
		b.f[dist.Max] = append(b.f[dist.Max], m.max)
		return nil
	}
	var src *metricSource
	if m != nil {
		src = m.src
	}
	for i, s := range e.States {
		if s.Reduce == metrics.ReduceCat {
			continue // gathered by gatherRows
		}
		op, err := opOf(s.Reduce)
		if err != nil {
			return fmt.Errorf("logged metric %q: %w", e.Key, err)
		}
		var value *tensors.Tensor
		if src != nil && i < len(src.stateKeys) && m.seen {
			value = src.carry.Value(src.stateKeys[i])
		}
		if s.Int {
			vals := identityInts(op, s.Size)
			if value != nil {
				vals = tensors.MustCopyFlatData[int64](value)
			}
			b.i[op] = append(b.i[op], vals...)
			continue
		}
		vals := identityFloats(op, s.Size)
		if value != nil {
			vals = tensors.MustCopyFlatData[float64](value)
		}
		b.f[op] = append(b.f[op], vals...)
	}
	return nil
}

// allReduce reduces every non-empty buffer (the layout is rank 0's, so
// every rank has the same non-empty buffers).
func (b *syncBuffers) allReduce(g dist.Group) error {
	for op := range b.f {
		if len(b.f[op]) > 0 {
			if err := g.AllReduceFloat64(b.f[op], dist.Op(op)); err != nil {
				return err
			}
		}
		if len(b.i[op]) > 0 {
			if err := g.AllReduceInt64(b.i[op], dist.Op(op)); err != nil {
				return err
			}
		}
	}
	return nil
}

// unpack takes e's reduced values from the front of the buffers into m (a
// rank without m only consumes them).
func (b *syncBuffers) unpack(m *metric, e syncEntry) error {
	if e.States == nil {
		sum, weight := b.f[dist.Sum][0], b.f[dist.Sum][1]
		lo, hi := b.f[dist.Min][0], b.f[dist.Max][0]
		b.f[dist.Sum], b.f[dist.Min], b.f[dist.Max] = b.f[dist.Sum][2:], b.f[dist.Min][1:], b.f[dist.Max][1:]
		if m != nil && weight > 0 {
			m.seen, m.sum, m.weight, m.min, m.max = true, sum, weight, lo, hi
		}
		return nil
	}
	restored := map[string]*tensors.Tensor{}
	for i, s := range e.States {
		if s.Reduce == metrics.ReduceCat {
			continue
		}
		op, _ := opOf(s.Reduce)
		var ints []int64
		var floats []float64
		if s.Int {
			ints, b.i[op] = append([]int64(nil), b.i[op][:s.Size]...), b.i[op][s.Size:]
		} else {
			floats, b.f[op] = append([]float64(nil), b.f[op][:s.Size]...), b.f[op][s.Size:]
		}
		if m == nil || m.src == nil || !m.seen || i >= len(m.src.stateKeys) {
			continue
		}
		key := m.src.stateKeys[i]
		dims := m.src.carry.Value(key).Shape().Dimensions
		if s.Int {
			restored[key] = tensors.FromFlatDataAndDimensions(ints, dims...)
		} else {
			restored[key] = tensors.FromFlatDataAndDimensions(floats, dims...)
		}
	}
	if len(restored) > 0 {
		return m.src.carry.Restore(restored)
	}
	return nil
}

// identityInts returns n copies of op's identity element for int64.
func identityInts(op dist.Op, n int) []int64 {
	v := int64(0)
	switch op {
	case dist.Max:
		v = math.MinInt64
	case dist.Min:
		v = math.MaxInt64
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// identityFloats returns n copies of op's identity element for float64.
func identityFloats(op dist.Op, n int) []float64 {
	v := 0.0
	switch op {
	case dist.Max:
		v = math.Inf(-1)
	case dist.Min:
		v = math.Inf(1)
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}
