package engine

import (
	"fmt"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
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
	// NoFusion builds graphs without GoMLX's fused ops (see withoutFusion).
	NoFusion bool
}

// New returns an engine with a fresh store whose random state is seeded with
// seed, so that variable initialisation is reproducible.
func New(backend compute.Backend, dtype dtypes.DType, seed int64) (*Engine, error) {
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(seed); err != nil {
		return nil, fmt.Errorf("seeding the model store: %w", err)
	}
	return &Engine{Backend: backend, Store: store, DType: dtype}, nil
}

// Program is a compiled graph function: GoMLX traces and compiles it once per
// distinct set of input shapes and caches the result.
type Program struct {
	name      string
	exec      *model.Exec
	numInputs int
	args      []any
	noFusion  bool
}

// Compile wraps fn in an executor over the engine's store.
func (e *Engine) Compile(name string, fn GraphFn) (*Program, error) {
	p := &Program{name: name, noFusion: e.NoFusion}
	exec, err := model.NewExec(e.Backend, e.Store, func(scope *model.Scope, all []*graph.Node) []*graph.Node {
		inputs := castFloats(all[:p.numInputs], e.DType)
		labels := castFloats(all[p.numInputs:], e.DType)
		return fn(scope, inputs, labels)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p.exec = exec.WithName(name)
	return p, nil
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
	p.numInputs = len(b.Inputs)
	p.args = p.args[:0]
	for _, t := range b.Inputs {
		p.args = append(p.args, t)
	}
	for _, t := range b.Labels {
		p.args = append(p.args, t)
	}
	if p.noFusion {
		defer withoutFusion()()
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
	return outputs, graphID, nil
}

// Compile traces and compiles the program for the shapes of b's tensors
// without running it (variables are created, not initialised).
func (p *Program) Compile(b *data.Batch) error {
	p.numInputs = len(b.Inputs)
	var shapes []shapes.Shape
	for _, t := range append(append([]*tensors.Tensor{}, b.Inputs...), b.Labels...) {
		shapes = append(shapes, t.Shape())
	}
	if p.noFusion {
		defer withoutFusion()()
	}
	err := Catch(func() error {
		_, err := p.exec.Compile(shapes...)
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	return nil
}

// InitializeVariables gives every variable created by a trace (and not
// loaded) its initial value, as the first execution would.
func (e *Engine) InitializeVariables() error {
	return Catch(func() error { return e.Store.InitializeVariables(e.Backend, nil) })
}
