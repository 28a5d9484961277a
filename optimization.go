package volt

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/optim"
)

var nan = math.NaN()

// trainProgram is automatic optimization compiled into one graph per input
// shape: forward, loss, gradients, the trace-time hooks, the optimizer update
// and the logged values.
type trainProgram struct {
	prog      *engine.Program
	optimizer *optim.Optimizer
	// metrics maps each compiled graph to the metrics of its logged outputs.
	metrics map[graph.GraphId][]*metric
	traced  []stepLog // logs of the graph traced last
	out     StepOutput
}

// optimizerFor returns the module's optimizer, or Adam(1e-3).
func optimizerFor(m Module) (*optim.Optimizer, error) {
	oc, ok := m.(OptimizerConfigurer)
	if !ok {
		return optim.Adam(1e-3), nil
	}
	o := oc.ConfigureOptimizers()
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("%T.ConfigureOptimizers: %w", m, err)
	}
	return o, nil
}

// buildTrainProgram prepares the training step of the current module.
func (t *Trainer) buildTrainProgram() (*trainProgram, error) {
	opt, err := optimizerFor(t.module)
	if err != nil {
		return nil, err
	}
	tp := &trainProgram{optimizer: opt, metrics: map[graph.GraphId][]*metric{}}
	beforeBackward := find[OnBeforeBackward](t.targets)
	afterBackward := find[OnAfterBackward](t.targets)
	beforeOptStep := find[OnBeforeOptimizerStep](t.targets)
	store := t.eng.Store
	tp.prog, err = t.eng.Compile("TrainingStep", func(scope *model.Scope, inputs, labels []*graph.Node) []*graph.Node {
		s := &Step{scope: scope, graph: graphOf(inputs, labels), stage: RunningTrain}
		loss := t.module.TrainingStep(s, Batch{Inputs: inputs, Labels: labels})
		if loss == nil {
			panic("TrainingStep returned a nil loss")
		}
		if !loss.Shape().IsScalar() || !loss.DType().IsFloat() {
			panic(fmt.Sprintf("TrainingStep must return a floating-point scalar loss, got shape %s", loss.Shape()))
		}
		for _, h := range beforeBackward.items {
			h.OnBeforeBackward(s, loss)
		}
		vars := engine.TrainableVariables(store, s.graph)
		if len(vars) == 0 {
			panic("TrainingStep uses no trainable variables: nothing to optimize")
		}
		grads := make([]Gradient, len(vars))
		for i, g := range engine.Gradients(loss, vars) {
			grads[i] = Gradient{Variable: vars[i], Value: g}
		}
		for _, h := range afterBackward.items {
			h.OnAfterBackward(s, grads)
		}
		for _, h := range beforeOptStep.items {
			h.OnBeforeOptimizerStep(s, 0, grads)
		}
		values := make([]*graph.Node, len(grads))
		for i, g := range grads {
			values[i] = g.Value
		}
		opt.Apply(store, 0, vars, values, nil)
		tp.traced = s.logs
		outs := []*graph.Node{loss}
		for _, l := range s.logs {
			outs = append(outs, l.value)
		}
		return outs
	})
	if err != nil {
		return nil, err
	}
	return tp, nil
}

// graphOf returns the graph of the first node.
func graphOf(groups ...[]*graph.Node) *graph.Graph {
	for _, nodes := range groups {
		if len(nodes) > 0 {
			return nodes[0].Graph()
		}
	}
	panic("the batch has no inputs and no labels")
}

// step runs one training batch through the compiled step and records its
// logged values.
func (t *Trainer) trainStep(tp *trainProgram, b *data.Batch) (*StepOutput, error) {
	outs, gid, err := tp.prog.Run(b)
	if err != nil {
		return nil, err
	}
	metrics, err := t.metricsFor(tp.metrics, gid, tp.traced, t.trainRes, 0, 1)
	if err != nil {
		return nil, err
	}
	if err := t.record(metrics, outs[1:], b.Size); err != nil {
		return nil, err
	}
	tp.out = StepOutput{loss: outs[0]}
	return &tp.out, nil
}

// metricsFor returns the metrics of graph gid's logged outputs, resolving
// them from the logs of the last trace the first time the graph runs.
func (t *Trainer) metricsFor(cache map[graph.GraphId][]*metric, gid graph.GraphId, traced []stepLog, res *results, loader, numLoaders int) ([]*metric, error) {
	if ms, ok := cache[gid]; ok {
		return ms, nil
	}
	ms := make([]*metric, len(traced))
	for i, l := range traced {
		m, err := res.entry(l.name+dataloaderSuffix(loader, numLoaders), l.opts)
		if err != nil {
			return nil, err
		}
		ms[i] = m
	}
	cache[gid] = ms
	return ms, nil
}

// record adds a step's logged values to their metrics.
func (t *Trainer) record(ms []*metric, values []*tensors.Tensor, batchSize int) error {
	for i, m := range ms {
		v, err := engine.Float64(values[i])
		if err != nil {
			return fmt.Errorf("logged value %q: %w", m.key, err)
		}
		m.add(v, batchSize)
		t.publishStep(m)
	}
	return nil
}
