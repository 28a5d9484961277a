package volt

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/internal/engine"
)

// AutomaticOptimizer is implemented by modules that choose between automatic
// optimization (true, the default) and manual optimization (false; Lightning's
// automatic_optimization = False). In manual mode TrainingStep drives the
// optimizers itself through Step.Optimizers; volt still counts every
// optimizer step in the global step, runs the hooks and steps the schedulers
// at their interval. Its returned loss (may be nil) is only reported.
type AutomaticOptimizer interface {
	AutomaticOptimization() bool
}

// manualMode reports whether m asked for manual optimization.
func manualMode(m Module) bool {
	a, ok := m.(AutomaticOptimizer)
	return ok && !a.AutomaticOptimization()
}

// OptimizerHandle is one optimizer as a manual TrainingStep sees it.
type OptimizerHandle struct {
	step  *Step
	index int
	steps *compiledSteps // the steps tracing it, for the update's hooks
	trace *traceInfo
}

// Index returns the optimizer's position in ConfigureOptimizers' result.
func (h *OptimizerHandle) Index() int { return h.index }

// Step builds, in the training step's graph, the gradients of loss with
// respect to this optimizer's variables and their update (Lightning's
// manual_backward followed by optimizer.step()). The trace-time hooks run as
// in automatic optimization. Variables read after Step see the new values.
func (h *OptimizerHandle) Step(loss *Node) {
	s := h.step
	t := s.trainer
	if loss == nil || !loss.Shape().IsScalar() {
		panic(fmt.Sprintf("OptimizerHandle.Step: optimizer %d needs a scalar loss", h.index))
	}
	// The automatic update's hooks, without clipping, checks or precision
	// handling: a manual step does those itself.
	spec := h.steps.updateSpec(s, h.index)
	spec.Precision, spec.LRScale, spec.Clip = "", nil, nil
	spec.TrackGradNorm, spec.DetectAnomaly, spec.TerminateOnNaN = 0, false, false
	h.trace.manualSteps++
	if s.replay != nil {
		s.replay.step(s, spec, loss)
		return
	}
	engine.Apply(t.eng.Store, s.graph, engine.Backward(t.eng.Store, loss, spec), spec)
}

// Optimizers returns the module's optimizers in a manual TrainingStep. It
// panics in automatic optimization, where volt steps the optimizers itself.
func (s *Step) Optimizers() []*OptimizerHandle {
	if s.handles == nil {
		panic("volt.Step.Optimizers: only available in manual optimization (implement AutomaticOptimization() bool returning false)")
	}
	return s.handles
}

// traceManual builds the manual training step: the module calls Step on the
// handles it wants to update. With rp (data-parallel training, see
// manualReplay) it may build one stage of it instead: when the module
// reached the Step whose gradients the stage computes, the outputs are those
// gradients, and the graph leaves the variables and the carried state as it
// found them.
func (c *compiledSteps) traceManual(scope *model.Scope, inputs, labels []*graph.Node, info *traceInfo, rp *replayTrace) []*graph.Node {
	t := c.t
	s := &Step{scope: scope, graph: graphOf(inputs, labels), stage: RunningTrain, trainer: t, metrics: t.logs.trainMetrics,
		checksLabels: t.cfg.DetectAnomaly, replay: rp}
	for i := range c.opts {
		s.handles = append(s.handles, &OptimizerHandle{step: s, index: i, steps: c, trace: info})
	}
	loss := t.module.TrainingStep(s, Batch{Inputs: inputs, Labels: labels, Parts: c.parts})
	if rp != nil && rp.reached {
		engine.KeepVariables(t.eng.Store, s.graph)
		t.logs.trainMetrics.carry.DiscardSets(s.graph)
		return rp.out
	}
	if loss == nil {
		loss = graph.ScalarZero(s.graph, t.eng.DType)
	}
	if info.manualSteps == 0 {
		t.sayOnce("manual-no-step", "volt: the manual TrainingStep called no OptimizerHandle.Step; nothing is trained")
	}
	info.logs, info.labelChecks = s.logs, s.labelChecks
	outs := []*graph.Node{loss}
	for _, l := range s.logs {
		outs = append(outs, l.value)
	}
	return append(outs, s.labelCheckOutputs()...)
}
