package volt

// This file is the named outputs of validation, test and predict steps
// (Step.Output): which runs fetch them, how they join the compiled step, and
// how they reach the batch-end hooks.

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// StepOutputReader is implemented by a callback (or module) whose batch-end
// hooks read the named outputs of a stage's steps (StepOutput.Output).
// When a run starts, volt fetches a stage's step outputs only if a target
// implementing the stage's batch-end hook wants them: a callback when
// ReadsStepOutputs(stage) is true, the module unless it implements this
// interface and says false. Otherwise the outputs are left out of the
// compiled step: nobody pays for a transfer nobody reads.
//
// stage is RunningValidate (also for the sanity check), RunningTest or
// RunningPredict.
type StepOutputReader interface {
	ReadsStepOutputs(stage RunningStage) bool
}

// namedOutput is one Step.Output call.
type namedOutput struct {
	name  string
	value *graph.Node
}

// Output makes value a named output of a validation, test or predict step
// (the dict a Lightning validation_step returns): the stage's batch-end
// hooks (OnValidationBatchEnd, OnTestBatchEnd, OnPredictBatchEnd) read it on
// the host with StepOutput.Output. It is computed and copied to the host
// only in runs where a hook reads step outputs (see StepOutputReader). It
// panics in a training step, on an empty or repeated name, or a nil value.
func (s *Step) Output(name string, value *Node) {
	switch {
	case s.stage == RunningTrain:
		panic(fmt.Sprintf("volt.Step.Output(%q): a training step has no named outputs; they are for validation, test and predict steps", name))
	case name == "":
		panic("volt.Step.Output: empty output name")
	case value == nil:
		panic(fmt.Sprintf("volt.Step.Output(%q): nil value", name))
	}
	for _, o := range s.outputs {
		if o.name == name {
			panic(fmt.Sprintf("volt.Step.Output(%q): the name is given twice in the same step", name))
		}
	}
	s.outputs = append(s.outputs, namedOutput{name, value})
}

// wantsOutputs reports whether a target of the batch-end hook batchEnd of
// stage reads the step's named outputs in this run.
func (t *Trainer) wantsOutputs(batchEnd hookID, stage RunningStage) bool {
	if t.hooks == nil {
		return false
	}
	for _, tg := range t.hooks.by[batchEnd] {
		if r, ok := tg.value.(StepOutputReader); ok {
			if r.ReadsStepOutputs(stage) {
				return true
			}
			continue
		}
		if tg.kind == onModule {
			return true
		}
	}
	return false
}

// outputNodes returns the nodes of a traced step's named outputs, and
// records their names in names.
func outputNodes(outs []namedOutput, names *[]string) []*graph.Node {
	nodes := make([]*graph.Node, len(outs))
	*names = (*names)[:0]
	for i, o := range outs {
		nodes[i] = o.value
		*names = append(*names, o.name)
	}
	return nodes
}

// fetchOutputs brings a run's named outputs to the host and returns the
// StepOutput the batch-end hooks see.
func (t *Trainer) fetchOutputs(stage RunningStage, names []string, values []*tensors.Tensor) *StepOutput {
	out := &StepOutput{stage: stage, fetched: true, outputs: make(map[string]*tensors.Tensor, len(names))}
	t.eng.ToHost(values)
	for i, n := range names {
		out.outputs[n] = values[i]
	}
	return out
}
