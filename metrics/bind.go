package metrics

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// Bound is a metric whose fixed-size states are variables of a model.Store,
// updated inside whatever compiled step calls Update, and whose ReduceCat
// states are host rows. It is what the engine holds per logged metric.
//
// Per step: the step's graph function calls Update, which reads and sets the
// variables (no host transfer) and returns the nodes of the rows ReduceCat
// states append; the engine makes those nodes outputs of the step and passes
// the resulting tensors to AppendRows. At epoch end (or when logging): State,
// then the metric's Compute. Reset re-initialises the variables and drops the
// rows.
type Bound struct {
	updater Updater
	specs   []StateSpec
	vars    []*model.Variable // nil for ReduceCat states
	host    *State            // rows of ReduceCat states; fixed states as read last
}

// Bind creates (or reuses, after a checkpoint load) one non-trainable
// variable per fixed-size state of u under prefix in store, set to its
// initial value.
func Bind(store *model.Store, prefix string, u Updater) (*Bound, error) {
	host, err := NewState(u)
	if err != nil {
		return nil, fmt.Errorf("binding metric under %q: %w", prefix, err)
	}
	b := &Bound{updater: u, specs: host.Specs(), vars: make([]*model.Variable, len(host.Specs())), host: host}
	for i, spec := range b.specs {
		if spec.Reduce == ReduceCat {
			continue
		}
		path := prefix + "/" + spec.Name
		v := store.GetVariable(path)
		if v == nil {
			v, err = store.CreateVariable(path, InitialTensor(spec))
			if err != nil {
				return nil, fmt.Errorf("binding metric state %q: %w", path, err)
			}
		}
		v.SetTrainable(false)
		b.vars[i] = v
	}
	return b, nil
}

// Update folds one batch into the state inside g: it reads the variables,
// calls the metric's Update and sets the variables to the new values. It
// returns the rows of each ReduceCat state (in States order, only those), to
// be made outputs of the step and passed to AppendRows.
func (b *Bound) Update(preds, target *graph.Node) []*graph.Node {
	g := preds.Graph()
	state := make([]*graph.Node, len(b.specs))
	for i, v := range b.vars {
		if v != nil {
			state[i] = v.NodeValue(g)
		}
	}
	next := b.updater.Update(state, preds, target)
	if len(next) != len(b.specs) {
		panic(fmt.Sprintf("metrics: Update returned %d nodes for %d states", len(next), len(b.specs)))
	}
	var rows []*graph.Node
	for i, v := range b.vars {
		if v == nil {
			rows = append(rows, next[i])
			continue
		}
		v.SetNodeValue(graph.ConvertDType(next[i], b.specs[i].DType))
	}
	return rows
}

// BatchState returns, inside preds' graph, the state of this batch alone
// (every state, in States order: fixed-size states folded into their initial
// value, ReduceCat rows as they are), leaving the variables alone: the step
// value of a metric logged per step (Lightning's on_step) is the metric's
// Compute of these tensors, after NewStateFrom. The engine makes them outputs
// only on the steps that log.
func (b *Bound) BatchState(preds, target *graph.Node) []*graph.Node {
	g := preds.Graph()
	initial := make([]*graph.Node, len(b.specs))
	for i, spec := range b.specs {
		if spec.Reduce != ReduceCat {
			initial[i] = graph.ConstTensor(g, InitialTensor(spec))
		}
	}
	out := b.updater.Update(initial, preds, target)
	for i, spec := range b.specs {
		if spec.Reduce != ReduceCat {
			out[i] = graph.ConvertDType(out[i], spec.DType)
		}
	}
	return out
}

// AppendRows adds the step's ReduceCat rows (the tensors of the nodes Update
// returned, in the same order) to the host state.
func (b *Bound) AppendRows(rows []*tensors.Tensor) error {
	k := 0
	for i, v := range b.vars {
		if v != nil {
			continue
		}
		if k >= len(rows) {
			return fmt.Errorf("AppendRows: %d row tensors, the metric has more ReduceCat states", len(rows))
		}
		if err := b.host.Append(i, rows[k]); err != nil {
			return err
		}
		k++
	}
	if k != len(rows) {
		return fmt.Errorf("AppendRows: %d row tensors, the metric has %d ReduceCat states", len(rows), k)
	}
	return nil
}

// State returns the current state on the host: one transfer per fixed-size
// state (the variables' values) plus the ReduceCat rows.
func (b *Bound) State() (*State, error) {
	for i, v := range b.vars {
		if v == nil {
			continue
		}
		t, err := v.Value()
		if err != nil {
			return nil, fmt.Errorf("reading metric state %q: %w", v.Path(), err)
		}
		if err := b.host.Set(i, t); err != nil {
			return nil, err
		}
	}
	return b.host, nil
}

// Load sets the variables and rows to s (a restored checkpoint, or the
// merged state of every process).
func (b *Bound) Load(s *State) error {
	saved := s.Checkpoint()
	if err := b.host.Restore(saved); err != nil {
		return err
	}
	for i, v := range b.vars {
		if v != nil {
			if err := v.SetValue(saved[b.specs[i].Name]); err != nil {
				return fmt.Errorf("setting metric state %q: %w", v.Path(), err)
			}
		}
	}
	return nil
}

// Reset sets every state back to its initial value.
func (b *Bound) Reset() error {
	b.host.Reset()
	for i, v := range b.vars {
		if v != nil {
			if err := v.SetValue(InitialTensor(b.specs[i])); err != nil {
				return fmt.Errorf("resetting metric state %q: %w", v.Path(), err)
			}
		}
	}
	return nil
}
