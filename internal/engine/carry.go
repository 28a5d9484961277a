package engine

import (
	"fmt"
	"strings"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// Carry is state that programs take as extra inputs and return as extra
// outputs, held by the engine between runs (a metric's running counts, say).
// On a backend that embeds variables as constants (see the package doc),
// state an evaluation step updates cannot live in variables without a
// retrace per batch; carried state is a plain input, so a program traced once
// keeps running. On the Go backend the tensors stay where the outputs were
// written (host memory): no copy between runs.
//
// A Carry is a list of named slots, created while a program is traced (Node)
// and given their next value in the same trace (Set). Several programs may
// share one Carry (the training steps of each accumulation mode, say): every
// run passes every slot known at that moment. A trace that creates a slot
// reads it as a constant (its current value), so the run right after it is
// correct; the next run passes one more input, which traces the program once
// more, with the slot as an input.
type Carry struct {
	slots   []*carrySlot
	byKey   map[string]int
	pending map[string]*tensors.Tensor // restored values of slots not created yet
	tracing *carryTrace
}

// carrySlot is one carried tensor.
type carrySlot struct {
	key            string
	initial, value *tensors.Tensor
}

// carryTrace is what the Carry knows about the graph being traced.
type carryTrace struct {
	g      *graph.Graph
	inputs []*graph.Node // by slot: the input node (those passed to the run)
	next   []*graph.Node // by slot: the value Set in this trace
	read   []*graph.Node // by slot: the node Node returned in this trace
}

// NewCarry returns an empty Carry.
func NewCarry() *Carry {
	return &Carry{byKey: map[string]int{}, pending: map[string]*tensors.Tensor{}}
}

// Node returns, inside g (a graph being traced by a program that carries c),
// the current value of slot key, creating the slot with value initial on
// first use (or with the value Restore gave it). It panics outside such a
// trace, or when initial's shape differs from the slot's or the restored
// value's.
func (c *Carry) Node(g *graph.Graph, key string, initial *tensors.Tensor) *graph.Node {
	tr := c.trace(g, key)
	i, ok := c.byKey[key]
	if !ok {
		value := initial
		if p, ok := c.pending[key]; ok {
			if !p.Shape().Equal(initial.Shape()) {
				panic(fmt.Sprintf("carried state %q: restored shape %s, the state has %s", key, p.Shape(), initial.Shape()))
			}
			value = p
			delete(c.pending, key)
		}
		i = len(c.slots)
		c.byKey[key] = i
		c.slots = append(c.slots, &carrySlot{key: key, initial: initial, value: value})
	} else if !c.slots[i].initial.Shape().Equal(initial.Shape()) {
		panic(fmt.Sprintf("carried state %q has shape %s, traced again with %s", key, c.slots[i].initial.Shape(), initial.Shape()))
	}
	for len(tr.read) <= i {
		tr.read = append(tr.read, nil)
	}
	if tr.read[i] == nil {
		if i < len(tr.inputs) {
			tr.read[i] = tr.inputs[i]
		} else {
			tr.read[i] = graph.ConstTensor(g, c.slots[i].value)
		}
	}
	return tr.read[i]
}

// Set makes node the value slot key takes after the run of the graph being
// traced. The slot must have been read with Node in this trace.
func (c *Carry) Set(key string, node *graph.Node) {
	tr := c.trace(node.Graph(), key)
	i, ok := c.byKey[key]
	if !ok || i >= len(tr.read) || tr.read[i] == nil {
		panic(fmt.Sprintf("carried state %q is set before it is read in this graph", key))
	}
	if !node.Shape().Equal(tr.read[i].Shape()) {
		panic(fmt.Sprintf("carried state %q has shape %s, set to %s", key, tr.read[i].Shape(), node.Shape()))
	}
	for len(tr.next) <= i {
		tr.next = append(tr.next, nil)
	}
	tr.next[i] = node
}

// DiscardSets drops the values Set so far in the trace of g: every slot
// leaves the run of that graph as it came in. A program traced to compute
// something other than its step (the gradients of a data-parallel manual
// step, which runs again once they are reduced) calls it so that the state
// moves once per step.
func (c *Carry) DiscardSets(g *graph.Graph) {
	if c.tracing != nil && c.tracing.g == g {
		c.tracing.next = nil
	}
}

// trace returns the trace of g, or panics naming key when g is not being
// traced by a program carrying c.
func (c *Carry) trace(g *graph.Graph, key string) *carryTrace {
	if c.tracing == nil || c.tracing.g != g {
		panic(fmt.Sprintf("carried state %q is used outside the trace of a program that carries it", key))
	}
	return c.tracing
}

// Value returns the current value of slot key, or nil when there is none.
func (c *Carry) Value(key string) *tensors.Tensor {
	if i, ok := c.byKey[key]; ok {
		return c.slots[i].value
	}
	return nil
}

// Keys returns the keys of the slots that start with prefix, in creation order.
func (c *Carry) Keys(prefix string) []string {
	var out []string
	for _, s := range c.slots {
		if strings.HasPrefix(s.key, prefix) {
			out = append(out, s.key)
		}
	}
	return out
}

// Reset sets slot key back to its initial value (no slot: nothing to do).
func (c *Carry) Reset(key string) {
	if i, ok := c.byKey[key]; ok {
		c.slots[i].value = c.slots[i].initial
	}
	delete(c.pending, key)
}

// Values returns the current values of the slots whose keys start with
// prefix, with the restored values of those not created yet (what a
// checkpoint saves).
func (c *Carry) Values(prefix string) map[string]*tensors.Tensor {
	out := map[string]*tensors.Tensor{}
	for _, s := range c.slots {
		if strings.HasPrefix(s.key, prefix) {
			out[s.key] = s.value
		}
	}
	for key, v := range c.pending {
		if strings.HasPrefix(key, prefix) {
			out[key] = v
		}
	}
	return out
}

// DiscardRestored forgets the restored values of the slots not created yet:
// a slot created later starts from its initial value.
func (c *Carry) DiscardRestored() { clear(c.pending) }

// Restore sets the slots to values (a checkpoint's), now for those that
// exist and on creation for the others. A value whose shape differs from the
// existing slot's is an error naming the slot.
func (c *Carry) Restore(values map[string]*tensors.Tensor) error {
	for key, v := range values {
		i, ok := c.byKey[key]
		if !ok {
			c.pending[key] = v
			continue
		}
		if !v.Shape().Equal(c.slots[i].initial.Shape()) {
			return fmt.Errorf("carried state %q: restored shape %s, the state has %s", key, v.Shape(), c.slots[i].initial.Shape())
		}
		c.slots[i].value = v
	}
	return nil
}

// beginTrace starts the trace of g, whose extra inputs are carried.
func (c *Carry) beginTrace(g *graph.Graph, carried []*graph.Node) {
	c.tracing = &carryTrace{g: g, inputs: carried}
}

// endTrace ends the trace and returns the graph's extra outputs: one per
// slot known now, in slot order (the value Set, else the value read, else
// the input unchanged).
func (c *Carry) endTrace() []*graph.Node {
	tr := c.tracing
	c.tracing = nil
	outs := make([]*graph.Node, len(c.slots))
	for i, s := range c.slots {
		switch {
		case i < len(tr.next) && tr.next[i] != nil:
			outs[i] = tr.next[i]
		case i < len(tr.read) && tr.read[i] != nil:
			outs[i] = tr.read[i]
		case i < len(tr.inputs):
			outs[i] = tr.inputs[i]
		default:
			outs[i] = graph.ConstTensor(tr.g, s.value)
		}
	}
	return outs
}

// args appends the current value of every slot to args.
func (c *Carry) args(args []any) []any {
	for _, s := range c.slots {
		args = append(args, s.value)
	}
	return args
}

// store takes a run's extra outputs: the new values of the first len(outs) slots.
func (c *Carry) store(outs []*tensors.Tensor) {
	for i, t := range outs {
		c.slots[i].value = t
	}
}
