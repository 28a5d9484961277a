package volt

// This file binds the metric objects a step logs (Step.LogMetric) to the
// state the compiled step carries, and turns that state into logged values.

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/metrics"
)

// metricTable is the metric objects logged by the steps of the programs that
// share one carry (the training steps, or one evaluation loader's step).
type metricTable struct {
	carry *engine.Carry
	logs  map[graph.GraphId][]*metricSource
	// rows holds the host rows of the growing (ReduceCat) states, by the
	// first state key of their source: every graph's source of one metric
	// shares them.
	rows map[string]*metrics.State
	// bound caches, per graph and result collection, the entries its
	// metric logs resolve to, so that a step resolves no names.
	bound map[boundKey][]boundMetric
}

// boundKey identifies where a graph's metric logs are recorded.
type boundKey struct {
	gid                graph.GraphId
	res                *results
	loader, numLoaders int
}

// boundMetric is one logged name of a metric source and its entry.
type boundMetric struct {
	m      *metric
	src    *metricSource
	member string
}

func newMetricTable() *metricTable {
	return &metricTable{carry: engine.NewCarry(), logs: map[graph.GraphId][]*metricSource{}, bound: map[boundKey][]boundMetric{},
		rows: map[string]*metrics.State{}}
}

// metricSource is one LogMetric (or LogMetrics) call: the metric, the carry
// slots of its state and, when it is logged per step, of the batch's state.
type metricSource struct {
	carry     *engine.Carry
	names     []string // the values it logs: the metric's name, or the collection's names
	opts      logOptions
	updater   metrics.Updater
	compute   func(state []*tensors.Tensor) (map[string]metrics.Value, error)
	stateKeys []string // by state: fixed-size states are carry slots
	batchKeys []string // by fixed-size state; empty unless opts.onStep
	// specs are the updater's states. rows, rowNodes and catIdx are those
	// of its growing (ReduceCat) states: their host rows (in a State whose
	// fixed-size states epochState fills from the carry), the nodes of the
	// batch's rows (outputs of the step) and the states' indices.
	specs    []metrics.StateSpec
	rows     *metrics.State
	rowNodes []*graph.Node
	catIdx   []int
}

// logMetricSource traces u's update into the step's graph and records it.
func (s *Step) logMetricSource(src *metricSource, preds, target *graph.Node) {
	what := fmt.Sprintf("volt.Step.LogMetric(%q)", src.names)
	if s.metricsOff {
		return // a forward pass that is not a step (mixed precision's masters)
	}
	if s.metrics == nil {
		panic(what + ": metrics are logged in training, validation and test steps only")
	}
	for _, name := range src.names {
		if name == "" {
			panic(what + ": empty metric name")
		}
		if s.logged(name) {
			panic(fmt.Sprintf("%s: %q is logged twice in the same step", what, name))
		}
	}
	specs := src.updater.States()
	if _, err := metrics.NewState(src.updater); err != nil {
		panic(fmt.Sprintf("%s: %v", what, err))
	}
	for _, spec := range specs {
		if spec.Reduce == metrics.ReduceCat && s.stage == RunningTrain {
			panic(fmt.Sprintf("%s: state %q grows with the data (ReduceCat); training steps carry fixed-size states only (a checkpoint saves them mid-epoch): log it in a validation or test step, or use the binned form (thresholds) of curve metrics", what, spec.Name))
		}
	}
	s.checkMetricTargets(src, target)
	carry := s.metrics.carry
	src.carry, src.specs = carry, specs
	g := s.graph
	prefix := src.names[0]
	if len(src.names) > 1 {
		prefix = "" // a collection's state names already start with its metrics' names
	}
	state := make([]*graph.Node, len(specs))
	for i, spec := range specs {
		key := slotKey("state", prefix, spec.Name)
		src.stateKeys = append(src.stateKeys, key)
		if spec.Reduce == metrics.ReduceCat {
			src.catIdx = append(src.catIdx, i)
			continue
		}
		state[i] = carry.Node(g, key, metrics.InitialTensor(spec))
	}
	next := src.updater.Update(state, preds, target)
	if len(next) != len(specs) {
		panic(fmt.Sprintf("%s: Update returned %d nodes for %d states", what, len(next), len(specs)))
	}
	for i, spec := range specs {
		if spec.Reduce == metrics.ReduceCat {
			src.rowNodes = append(src.rowNodes, graph.ConvertDType(next[i], spec.DType))
			continue
		}
		carry.Set(src.stateKeys[i], graph.ConvertDType(next[i], spec.DType))
	}
	if len(src.catIdx) > 0 {
		src.rows = s.metrics.rowsOf(src)
	}
	if src.opts.onStep {
		initial := make([]*graph.Node, len(specs))
		for i, spec := range specs {
			if spec.Reduce == metrics.ReduceCat {
				continue // a batch's rows are the same whatever the state
			}
			key := slotKey("batch", prefix, spec.Name)
			src.batchKeys = append(src.batchKeys, key)
			carry.Node(g, key, metrics.InitialTensor(spec))
			initial[i] = graph.ConstTensor(g, metrics.InitialTensor(spec))
		}
		batch := src.updater.Update(initial, preds, target)
		k := 0
		for i, spec := range specs {
			if spec.Reduce == metrics.ReduceCat {
				continue
			}
			carry.Set(src.batchKeys[k], graph.ConvertDType(batch[i], spec.DType))
			k++
		}
	}
	s.metricSrcs = append(s.metricSrcs, src)
	gid := g.GraphId()
	s.metrics.logs[gid] = append(s.metrics.logs[gid], src)
}

// checkMetricTargets adds a check of target against the classes of every
// multiclass task of src's metrics (metrics.Classifier), when its targets
// are class indices: an out-of-range class fails the step, naming the
// metric and the batch.
func (s *Step) checkMetricTargets(src *metricSource, target *graph.Node) {
	cl, ok := src.updater.(metrics.Classifier)
	if !ok || target == nil || !target.DType().IsInt() {
		return
	}
	what := fmt.Sprintf("logged metric %q", src.names[0])
	if len(src.names) > 1 {
		what = fmt.Sprintf("logged metrics %q", src.names)
	}
	for _, task := range cl.Tasks() {
		if task.Kind != metrics.MulticlassTask {
			continue
		}
		var ignore *int
		if task.HasIgnoreIndex {
			ignore = &task.IgnoreIndex
		}
		s.addLabelCheck(target, task.NumClasses, ignore, what)
	}
}

// slotKey names a carry slot: "state/val_f1/tp".
func slotKey(kind, prefix, name string) string {
	if prefix == "" {
		return kind + "/" + name
	}
	return kind + "/" + prefix + "/" + name
}

// logged reports whether name is already logged in this step.
func (s *Step) logged(name string) bool {
	for _, l := range s.logs {
		if l.name == name {
			return true
		}
	}
	for _, src := range s.metricSrcs {
		for _, n := range src.names {
			if n == name {
				return true
			}
		}
	}
	return false
}

// record marks the metric objects logged by graph gid as logged in this
// step, in res (binding them on the graph's first run): their values are
// computed from the carried state when read. It is the metric objects' part
// of the logging pipeline's record stage (logging.go).
func (tb *metricTable) record(gid graph.GraphId, res *results, loader, numLoaders int) error {
	key := boundKey{gid, res, loader, numLoaders}
	bound, ok := tb.bound[key]
	if !ok {
		for _, src := range tb.logs[gid] {
			for _, name := range src.names {
				m, err := res.entry(name+dataloaderSuffix(loader, numLoaders), src.opts)
				if err != nil {
					return err
				}
				bound = append(bound, boundMetric{m, src, name})
			}
		}
		tb.bound[key] = bound
	}
	for _, b := range bound {
		b.m.src, b.m.member = b.src, b.member
		b.m.seen, b.m.fresh = true, true
	}
	return nil
}

// values computes the metric's values from its state: the epoch's
// (epochState), or the last batch's when batch is true.
func (src *metricSource) values(batch bool) (map[string]metrics.Value, error) {
	if !batch {
		st, err := src.epochState()
		if err != nil {
			return nil, err
		}
		return src.compute(st.Tensors())
	}
	state := make([]*tensors.Tensor, len(src.specs))
	k := 0
	for i, spec := range src.specs {
		if spec.Reduce == metrics.ReduceCat { // training steps, the only ones with step values, reject such states
			return nil, fmt.Errorf("metric %v: state %q grows with the data and has no per-step value", src.names, spec.Name)
		}
		key := src.batchKeys[k]
		k++
		if state[i] = src.carry.Value(key); state[i] == nil {
			return nil, fmt.Errorf("metric %v: no state %q", src.names, key)
		}
	}
	return src.compute(state)
}

// epochState returns the state accumulated since the last reset, on the
// host: the carried fixed-size states and the rows of the growing ones. It
// is what Compute reads, and what data-parallel processes would merge first
// (metrics.State.Pack, Unpack).
func (src *metricSource) epochState() (*metrics.State, error) {
	st := src.rows
	if st == nil {
		var err error
		if st, err = metrics.NewState(src.updater); err != nil {
			return nil, fmt.Errorf("metric %v: %w", src.names, err)
		}
	}
	for i, spec := range src.specs {
		if spec.Reduce == metrics.ReduceCat {
			continue
		}
		v := src.carry.Value(src.stateKeys[i])
		if v == nil {
			return nil, fmt.Errorf("metric %v: no state %q", src.names, src.stateKeys[i])
		}
		if err := st.Set(i, v); err != nil {
			return nil, fmt.Errorf("metric %v: %w", src.names, err)
		}
	}
	return st, nil
}

// scalarOf returns the scalar value of member in vals.
func scalarOf(vals map[string]metrics.Value, member, key string) (float64, error) {
	v, err := vals[member].Scalar()
	if err != nil {
		return 0, fmt.Errorf("logged metric %q: %w; log metrics with a scalar value (Average Micro, Macro or Weighted)", key, err)
	}
	return v, nil
}

// computeMetrics sets the epoch value of every metric object logged this
// epoch from its accumulated state (one Compute per LogMetric call). table,
// when not nil, gives their sources to entries restored from a checkpoint
// that no step has logged to since (a run resumed after an epoch's last
// batch).
func (r *results) computeMetrics(table *metricTable) error {
	if table != nil {
		for _, srcs := range table.logs {
			for _, src := range srcs {
				for _, name := range src.names {
					if m, ok := r.byKey[name]; ok && m.src == nil {
						m.src, m.member = src, name
					}
				}
			}
		}
	}
	cache := map[*metricSource]map[string]metrics.Value{}
	for _, m := range r.order {
		if m.src == nil || !m.seen || !m.opts.onEpoch {
			continue
		}
		vals, ok := cache[m.src]
		if !ok {
			var err error
			if vals, err = m.src.values(false); err != nil {
				return fmt.Errorf("logged metric %q: %w", m.key, err)
			}
			cache[m.src] = vals
		}
		v, err := scalarOf(vals, m.member, m.key)
		if err != nil {
			return err
		}
		m.epoch = v
		// The scalar accumulators hold the value too: a checkpoint saves
		// them, and a run resumed with no batch left in the epoch (whose
		// step is then never traced) reads the value from them.
		m.sum, m.weight, m.min, m.max = v, 1, v, v
	}
	return nil
}

// computeStepValue sets the step value of a metric object logged per step
// from the last batch's state.
func (m *metric) computeStepValue() error {
	vals, err := m.src.values(true)
	if err != nil {
		return fmt.Errorf("logged metric %q: %w", m.key, err)
	}
	m.step, err = scalarOf(vals, m.member, m.key)
	return err
}

// resetState sets the carried state of a metric object back to its initial value.
func (src *metricSource) resetState() {
	for i, k := range src.stateKeys {
		if src.specs[i].Reduce != metrics.ReduceCat {
			src.carry.Reset(k)
		}
	}
	if src.rows != nil {
		src.rows.Reset()
	}
}

// metricStateTensors returns the training metrics' carried state by slot
// key (for checkpoints): states only, not the per-batch values.
func (l *logging) metricStateTensors() map[string]*tensors.Tensor {
	if l.trainMetrics == nil {
		return map[string]*tensors.Tensor{}
	}
	// A run resumed from a checkpoint holds the restored state of a metric
	// whose step it has not traced yet, and saves it likewise.
	return l.trainMetrics.carry.Values("state/")
}

// resetTrainMetricState starts a training epoch's metric state afresh: the
// carried state of every metric object, those no step of this run has
// logged yet included (a run resumed at an epoch's end restored theirs), and
// the restored state of those whose step is not traced yet.
func (l *logging) resetTrainMetricState() {
	l.trainRes.reset()
	c := l.trainMetrics.carry
	for _, k := range c.Keys("state/") {
		c.Reset(k)
	}
	c.DiscardRestored()
}

// metricStatePrefix starts the names of the training metrics' carried state
// in checkpoint files ("/volt/metric_state/state/train_f1/tp").
const metricStatePrefix = engine.Prefix + "metric_state/"
