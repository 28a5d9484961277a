package engine

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"weak"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/gokernels"
)

// GraphFn builds one graph from a batch's inputs and labels (already cast to
// the compute dtype where they are floating point) and returns its outputs.
type GraphFn func(scope *model.Scope, inputs, labels []*graph.Node) []*graph.Node

// Engine holds the backend, the variable store of one model and the compute
// dtype.
type Engine struct {
	Backend compute.Backend
	Store   *model.Store
	DType   dtypes.DType
	// embedsVariables is the backend's PreferConstantsForVariables: GoMLX
	// then embeds the variables of evaluation graphs as constants.
	embedsVariables bool
	// hostCopies counts the tensors ToHost has brought to the host.
	hostCopies atomic.Int64
	// hostWrites counts the host updates (hostupdate.go) that changed
	// variables in place, which their tensors' identity does not show.
	hostWrites atomic.Int64
	// Log, if set, receives the notices of what the programs' graphs run
	// slower than they could (gokernels.NoticeWithoutOneDNN).
	Log *slog.Logger
}

// Mode says what a program does with the model, which decides how GoMLX
// traces it.
type Mode int

const (
	// Training programs update the model: graphs are marked as training
	// (dropout drops, batch statistics update) and read variables as
	// parameters.
	Training Mode = iota
	// Evaluation programs only read the model: graphs are marked as not
	// training. On a backend that prefers constants the variables are
	// embedded in the compiled graph, and the program retraces itself when
	// one of them has changed since.
	Evaluation
)

// String returns "training" or "evaluation".
func (m Mode) String() string {
	if m == Training {
		return "training"
	}
	return "evaluation"
}

// New returns an engine with a fresh store whose random state is seeded with
// seed, so that variable initialisation is reproducible.
func New(backend compute.Backend, dtype dtypes.DType, seed int64) (*Engine, error) {
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(seed); err != nil {
		return nil, fmt.Errorf("seeding the model store: %w", err)
	}
	return &Engine{Backend: backend, Store: store, DType: dtype,
		embedsVariables: backend.Capabilities().PreferConstantsForVariables}, nil
}

// Program is a compiled graph function: GoMLX traces and compiles it once per
// distinct set of input shapes and caches the result.
type Program struct {
	name      string
	mode      Mode
	engine    *Engine
	fn        GraphFn
	exec      *model.Exec
	numInputs int
	args      []any
	// embedded holds, for an evaluation program on a backend that embeds
	// variables, the value each variable its graphs read had when they were
	// traced (recorded by the trace itself, so that variables the trace
	// creates with a value are in it too).
	embedded []embeddedValue
	traces   int
	// rawInputs feeds the inputs as they are, without the cast of
	// floating-point data to the compute dtype; rawTail feeds only the
	// last rawTail inputs so (SetRawTail).
	rawInputs bool
	rawTail   int
	// carry, when set, is state the program takes after the labels and
	// returns after its outputs; carried says, per traced graph, how many
	// carried outputs it returns.
	carry     *Carry
	carried   map[graph.GraphId]int
	numLabels int
	// staging holds, per batch tensor (inputs, then labels), the shared
	// buffer each run copies it into (staging.go).
	staging []*tensors.Tensor
}

// SetCarry makes the program take every slot of c as extra inputs (after
// the labels) and return their next values as extra outputs, which Run
// strips from its result and stores in c. Call it before the first run.
func (p *Program) SetCarry(c *Carry) {
	p.carry = c
	p.carried = map[graph.GraphId]int{}
}

// embeddedValue is a variable and the value it had when a graph embedded it.
type embeddedValue struct {
	// hostWrites is the engine's count of in-place host updates then.
	hostWrites int64
	v          *model.Variable
	value      weak.Pointer[tensors.Tensor]
}

// Compile wraps fn in an executor over the engine's store. mode decides
// whether graphs are traced as training or evaluation graphs.
func (e *Engine) Compile(name string, mode Mode, fn GraphFn) (*Program, error) {
	p := &Program{name: name, mode: mode, engine: e, fn: fn}
	if err := p.newExec(); err != nil {
		return nil, err
	}
	return p, nil
}

// newExec (re)creates the executor; its graphs are traced on first use.
func (p *Program) newExec() error {
	e := p.engine
	exec, err := model.NewExec(e.Backend, e.Store, func(scope *model.Scope, all []*graph.Node) []*graph.Node {
		if len(all) > 0 {
			scope.Store().SetTraining(all[0].Graph(), p.mode == Training)
		}
		p.traces++
		inputs, labels := all[:p.numInputs], all[p.numInputs:]
		var carried []*graph.Node
		if p.carry != nil {
			labels, carried = all[p.numInputs:p.numInputs+p.numLabels], all[p.numInputs+p.numLabels:]
		}
		if !p.rawInputs {
			tail := min(p.rawTail, len(inputs))
			cast := castFloats(inputs[:len(inputs)-tail], e.DType)
			inputs, labels = append(cast, inputs[len(inputs)-tail:]...), castFloats(labels, e.DType)
		}
		if p.carry == nil || len(all) == 0 {
			outs := p.fn(scope, inputs, labels)
			p.recordEmbedded(outs)
			return outs
		}
		g := all[0].Graph()
		p.carry.beginTrace(g, carried)
		defer func() { p.carry.tracing = nil }()
		outs := p.fn(scope, inputs, labels)
		p.recordEmbedded(outs)
		extra := p.carry.endTrace()
		p.carried[g.GraphId()] = len(extra)
		return append(outs, extra...)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	if p.exec != nil {
		p.exec.Finalize()
	}
	p.exec = exec.WithName(p.name)
	p.embedded = p.embedded[:0]
	return nil
}

// SetRawTail makes the next runs feed the last n inputs as they are (the
// others are cast to the compute dtype as usual): gradients a program takes
// back keep their variables' dtype.
func (p *Program) SetRawTail(n int) { p.rawTail = n }

// Traces returns how many graphs the program has traced so far.
func (p *Program) Traces() int { return p.traces }

// refresh retraces an evaluation program whose graphs embedded a variable
// value that has since changed (a training step, a loaded checkpoint, a
// hook's SetValue).
func (p *Program) refresh() error {
	if p.mode != Evaluation || !p.engine.embedsVariables || !p.embeddedStale() {
		return nil
	}
	return p.newExec()
}

// recordEmbedded records, at the end of an evaluation graph's trace, the
// value of each variable the graph reads that has one: GoMLX embedded those
// as constants (the others, still to be initialised, are parameters). It
// runs after the graph function, so that the variables the trace itself
// created (with VariableWithValue, or from the store's loader) are
// recorded: the graphs of a Validate or Test before any training step embed
// exactly those.
func (p *Program) recordEmbedded(outs []*graph.Node) {
	if p.mode != Evaluation || !p.engine.embedsVariables || len(outs) == 0 {
		return
	}
	g := outs[0].Graph()
	for v := range p.engine.Store.IterVariables() {
		if !v.HasValue() || !v.InUseByGraph(g) {
			continue
		}
		if t, err := v.Value(); err == nil {
			p.embedded = append(p.embedded, embeddedValue{v: v, value: weak.Make(t), hostWrites: p.engine.hostWrites.Load()})
		}
	}
}

// embeddedStale reports whether a variable's value differs from the one
// recorded when the graphs were traced. Values are compared by identity:
// GoMLX gives a variable a new tensor whenever it changes, and a weak
// pointer never equals one made from a later tensor at the same address;
// a host update changes values in place and counts itself instead.
func (p *Program) embeddedStale() bool {
	for _, ev := range p.embedded {
		t, err := ev.v.Value()
		if err != nil || weak.Make(t) != ev.value || ev.hostWrites != p.engine.hostWrites.Load() {
			return true
		}
	}
	return false
}

// castFloats converts floating-point nodes to dtype and leaves the others.
func castFloats(nodes []*graph.Node, dtype dtypes.DType) []*graph.Node {
	out := make([]*graph.Node, len(nodes))
	for i, n := range nodes {
		if n.DType().IsFloat() && n.DType() != dtype {
			n = graph.ConvertDType(n, dtype)
		}
		out[i] = n
	}
	return out
}

// Run executes the program on a batch and returns its outputs and the id of
// the graph that ran (graphs differ per input shape). Panics raised while
// tracing or running are returned as errors.
func (p *Program) Run(b *data.Batch) (outputs []*tensors.Tensor, graphID graph.GraphId, err error) {
	p.numInputs, p.numLabels = len(b.Inputs), len(b.Labels)
	p.args = p.args[:0]
	for _, t := range b.Inputs {
		p.args = append(p.args, p.staged(len(p.args), t))
	}
	for _, t := range b.Labels {
		p.args = append(p.args, p.staged(len(p.args), t))
	}
	if p.carry != nil {
		p.args = p.carry.args(p.args)
	}
	if err := p.refresh(); err != nil {
		return nil, 0, err
	}
	err = Catch(func() error {
		var g *graph.Graph
		var err error
		outputs, g, err = p.exec.CallWithGraph(p.args...)
		if err == nil {
			graphID = g.GraphId()
		}
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", p.name, err)
	}
	if p.carry != nil {
		n := p.carried[graphID]
		p.carry.store(outputs[len(outputs)-n:])
		outputs = outputs[:len(outputs)-n]
	}
	p.engine.notice()
	return outputs, graphID, nil
}

// notice says, once per process, what the graphs built so far run slower
// than they could; one atomic load when there is nothing to say.
func (e *Engine) notice() {
	if e.Log != nil {
		gokernels.NoticeWithoutOneDNN(e.Log)
	}
}

// Compile traces and compiles the program for the shapes of b's tensors
// without running it (variables are created, not initialised).
func (p *Program) Compile(b *data.Batch) error {
	p.numInputs, p.numLabels = len(b.Inputs), len(b.Labels)
	var shapes []shapes.Shape
	for _, t := range append(append([]*tensors.Tensor{}, b.Inputs...), b.Labels...) {
		shapes = append(shapes, t.Shape())
	}
	if p.carry != nil {
		for _, s := range p.carry.slots {
			shapes = append(shapes, s.value.Shape())
		}
	}
	if err := p.refresh(); err != nil {
		return err
	}
	err := Catch(func() error {
		_, err := p.exec.Compile(shapes...)
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	p.engine.notice()
	return nil
}

// InitializeVariables gives every variable created by a trace (and not
// loaded) its initial value, as the first execution would.
func (e *Engine) InitializeVariables() error {
	return Catch(func() error { return e.Store.InitializeVariables(e.Backend, nil) })
}
