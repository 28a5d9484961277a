package volt

import (
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
)

// Manual optimization under data-parallel training. A manual TrainingStep is
// one graph in which each OptimizerHandle.Step builds its gradients and
// applies them at once, and code after a Step reads the updated variables.
// Under Devices: N every Step's gradients must be all-reduced on the host
// before they are applied, in the middle of that graph; GoMLX's programs
// cannot stop there. So the step runs as stages, each a program tracing the
// whole TrainingStep from the variables as they were before the batch:
//
//   - stage k (k = 0, 1, …) applies the gradients of Steps 0…k-1, which it
//     takes as inputs (already all-reduced), builds the gradients of Step k
//     and returns them; it leaves the variables (random state included) and
//     the metrics' carried state as it found them;
//   - the stage that finds no Step k (k = the number of Steps) applies every
//     Step's all-reduced gradients and returns what the step returns in one
//     process: the loss, the logged values, the checks. Only it changes the
//     variables and the state.
//
// Every stage draws the same random numbers and computes the same values up
// to the Step it stops at, so each Step's gradients are those of the fused
// step in which the earlier Steps applied the all-reduced gradients: the
// update of one process over all the ranks' batches, up to float rounding.
// A step with K Steps costs K+1 forward passes and K all-reduces; the
// trace-time hooks run in every stage's trace.

// maxManualSteps bounds the stages of one manual step: a module whose
// number of Steps never settles would otherwise compile forever.
const maxManualSteps = 64

// manualReplay runs one manual training step as stages (see above).
type manualReplay struct {
	c      *compiledSteps
	tp     *trainProgram
	name   string
	stages []*engine.Program
	// vars[j] are the variables of Step j's gradients, in output order, as
	// stage j traced them.
	vars [][]*model.Variable
	// final marks the graphs that traced the whole step (the last stage).
	final map[graph.GraphId]bool
	grads []*tensors.Tensor // the reduced gradients of the Steps so far
	batch data.Batch
}

// replayTrace is what a Step needs to know about the stage being traced.
type replayTrace struct {
	r       *manualReplay
	stage   int
	calls   int           // the Steps made so far in this trace
	grads   []*graph.Node // the reduced gradients of Steps 0…stage-1
	reached bool          // Step stage was made: out holds its gradients
	out     []*graph.Node
}

// step is OptimizerHandle.Step in a stage: apply the reduced gradients of an
// earlier Step, build the gradients of this stage's Step, or (after it)
// nothing, since nothing after them is output.
func (rp *replayTrace) step(s *Step, spec *engine.UpdateSpec, loss *graph.Node) {
	store := s.trainer.eng.Store
	j := rp.calls
	rp.calls++
	switch {
	case j < rp.stage:
		vars := rp.r.vars[j]
		if got := spec.Vars(); !slices.Equal(got, vars) {
			panic(fmt.Sprintf("OptimizerHandle.Step %d (optimizer %d) updates %s in this trace but %s in an earlier one: "+
				"under data-parallel training every trace of a manual TrainingStep must make the same Steps", j, spec.OptimizerIdx, paths(got), paths(vars)))
		}
		grads := make([]engine.Gradient, len(vars))
		for i, v := range vars {
			grads[i] = engine.Gradient{Variable: v, Value: rp.grads[i]}
		}
		rp.grads = rp.grads[len(vars):]
		engine.Apply(store, s.graph, grads, spec)
	case j == rp.stage:
		spec.Ranks = rp.r.c.reduce.Ranks
		grads := engine.Backward(store, loss, spec)
		vars := make([]*model.Variable, len(grads))
		for i, g := range grads {
			vars[i] = g.Variable
		}
		for len(rp.r.vars) <= j {
			rp.r.vars = append(rp.r.vars, nil)
		}
		rp.r.vars[j] = vars
		rp.reached, rp.out = true, engine.Values(grads)
	}
}

// paths returns the variables' paths.
func paths(vars []*model.Variable) []string {
	out := make([]string, len(vars))
	for i, v := range vars {
		out[i] = v.Path()
	}
	return out
}

// gradInputs returns how many gradients stage k takes: those of Steps 0…k-1.
func (r *manualReplay) gradInputs(k int) int {
	n := 0
	for j := range k {
		if j >= len(r.vars) || r.vars[j] == nil {
			panic(fmt.Sprintf("manual step under data-parallel training: stage %d traced before the gradients of Step %d are known", k, j))
		}
		n += len(r.vars[j])
	}
	return n
}

// stage returns stage k's program, compiling it on first use.
func (r *manualReplay) stage(k int) (*engine.Program, error) {
	if k < len(r.stages) {
		return r.stages[k], nil
	}
	c, t := r.c, r.c.t
	name := fmt.Sprintf("%s[gradients of Step %d]", r.name, k)
	p, err := t.eng.Compile(name, engine.Training, func(scope *model.Scope, inputs, labels []*graph.Node) []*graph.Node {
		n := len(inputs) - r.gradInputs(k)
		rp := &replayTrace{r: r, stage: k, grads: inputs[n:]}
		info := &traceInfo{}
		outs := c.traceManual(scope, inputs[:n], labels, info, rp)
		if !rp.reached {
			r.final[outs[0].Graph().GraphId()] = true
			r.tp.traced = info
		}
		return outs
	})
	if err != nil {
		return nil, err
	}
	p.SetCarry(t.logs.trainMetrics.carry)
	r.stages = append(r.stages, p)
	return p, nil
}

// compile compiles the first stage for b's shapes (the later ones take the
// first's gradients as inputs, so they compile when the first has run).
func (r *manualReplay) compile(b *data.Batch) error {
	p, err := r.stage(0)
	if err != nil {
		return err
	}
	return p.Compile(b)
}

// run runs the stages on b, all-reducing each Step's gradients, and returns
// the last stage's outputs and graph.
func (r *manualReplay) run(b *data.Batch) ([]*tensors.Tensor, graph.GraphId, error) {
	t := r.c.t
	r.grads = r.grads[:0]
	for k := 0; k <= maxManualSteps; k++ {
		p, err := r.stage(k)
		if err != nil {
			return nil, 0, err
		}
		r.batch = data.Batch{Inputs: append(append(r.batch.Inputs[:0], b.Inputs...), r.grads...), Labels: b.Labels, Size: b.Size}
		p.SetRawTail(len(r.grads))
		outs, gid, err := p.Run(&r.batch)
		if err != nil {
			return nil, 0, err
		}
		if r.final[gid] {
			return outs, gid, nil
		}
		stop := t.profile(engine.ActionAllReduce)
		grads, err := r.c.reduce.Sum(outs)
		stop()
		if err != nil {
			return nil, 0, fmt.Errorf("%s: reducing the gradients of Step %d: %w", r.name, k, err)
		}
		r.grads = append(r.grads, grads...)
	}
	return nil, 0, fmt.Errorf("%s: more than %d OptimizerHandle.Step calls in one manual TrainingStep", r.name, maxManualSteps)
}
