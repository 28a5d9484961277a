package volt

import (
	"fmt"
	"maps"
	"slices"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/internal/engine"
)

// Step is handed to the step functions while they are traced into a graph.
// It gives the model's scope and collects the values to log; each logged value
// becomes an output of the compiled step.
type Step struct {
	scope         *model.Scope
	graph         *graph.Graph
	stage         RunningStage
	dataloaderIdx int
	optimizerIdx  int
	logs          []stepLog
	trainer       *Trainer
	handles       []*OptimizerHandle // manual optimization only
}

// stepLog is one value logged in a step function.
type stepLog struct {
	name  string
	value *graph.Node
	opts  logOptions
}

// Scope returns the model's root scope, where layers create their variables.
func (s *Step) Scope() *model.Scope { return s.scope }

// Graph returns the graph being built.
func (s *Step) Graph() *graph.Graph { return s.graph }

// Stage returns what the step is run for (train, validate, test, predict,
// sanity_check).
func (s *Step) Stage() RunningStage { return s.stage }

// Training reports whether this is a training step (for dropout and the like).
func (s *Step) Training() bool { return s.stage == RunningTrain }

// DataloaderIdx returns the index of the evaluation or prediction loader the
// step is traced for (0 in training).
func (s *Step) DataloaderIdx() int { return s.dataloaderIdx }

// OptimizerIdx returns the index of the optimizer the training step is traced for.
func (s *Step) OptimizerIdx() int { return s.optimizerIdx }

// Log records a scalar value under name. In training steps it defaults to
// per-step logging; in validation and test steps to an epoch mean weighted by
// batch size. Options change that (OnStep, OnEpoch, ProgBar, NoLogger, Reduce).
func (s *Step) Log(name string, value *graph.Node, opts ...LogOption) {
	if name == "" {
		panic("volt.Step.Log: empty metric name")
	}
	for _, l := range s.logs {
		if l.name == name {
			panic(fmt.Sprintf("volt.Step.Log: %q is logged twice in the same step", name))
		}
	}
	v, err := engine.ToScalar(value)
	if err != nil {
		panic(fmt.Sprintf("volt.Step.Log(%q): %v", name, err))
	}
	s.logs = append(s.logs, stepLog{name: name, value: v, opts: resolveLogOptions(defaultLogOptions(s.stage, true), opts)})
}

// LogDict logs several values with the same options, in name order.
func (s *Step) LogDict(values map[string]*graph.Node, opts ...LogOption) {
	for _, name := range slices.Sorted(maps.Keys(values)) {
		s.Log(name, values[name], opts...)
	}
}
