package volt

import (
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
)

// This file builds the validation, test and predict steps as GoMLX
// programs, compiled without gradients, and runs them for the loops through
// evalSteps (compiledEvalSteps).

// evalKey identifies a compiled evaluation graph function.
type evalKey struct {
	stage  RunningStage
	loader int
	of     int
	// outputs says the step's named outputs are outputs of the program.
	outputs bool
}

// evalProgram is an evaluation (or prediction) step compiled without gradients.
type evalProgram struct {
	prog    *engine.Program
	metrics map[graph.GraphId][]*metric
	traced  []stepLog
	table   *metricTable // metric objects logged, their carried state
	// outputNames are, per graph, the names of the named outputs it
	// returns (empty when the run does not fetch them).
	outputNames map[graph.GraphId][]string
	// labelChecks are, per graph, its step's ClassLabels checks, whose
	// outputs follow the logged values.
	labelChecks map[graph.GraphId][]labelCheck
}

// evalProgramFor returns the compiled step of kind for loader i of n.
func (t *Trainer) evalProgramFor(kind evalKind, i, n int) (*evalProgram, error) {
	key := evalKey{kind.stage, i, n, t.wantsOutputs(kind.hooks.batchEnd, kind.stage)}
	if ep, ok := t.perModule.evals[key]; ok {
		return ep, nil
	}
	ep := &evalProgram{metrics: map[graph.GraphId][]*metric{}, table: newMetricTable(), outputNames: map[graph.GraphId][]string{},
		labelChecks: map[graph.GraphId][]labelCheck{}}
	var err error
	ep.prog, err = t.eng.Compile(kind.stepName, engine.Evaluation, func(scope *model.Scope, inputs, labels []*graph.Node) []*graph.Node {
		g := graphOf(inputs, labels)
		s := &Step{scope: scope, graph: g, stage: kind.stage, dataloaderIdx: i, metrics: ep.table, checksLabels: t.cfg.DetectAnomaly}
		kind.step(s, Batch{Inputs: inputs, Labels: labels})
		t.checkLoaded(g, engine.TrainableVariables(t.eng.Store, g))
		ep.traced = s.logs
		outs := []*graph.Node{graph.ScalarZero(g, t.eng.DType)}
		for _, l := range s.logs {
			outs = append(outs, l.value)
		}
		if len(s.labelChecks) > 0 {
			ep.labelChecks[g.GraphId()] = s.labelChecks
			outs = append(outs, s.labelCheckOutputs()...)
		}
		if key.outputs {
			var names []string
			outs = append(outs, outputNodes(s.outputs, &names)...)
			ep.outputNames[g.GraphId()] = names
		}
		return append(outs, rowNodes(s.metricSrcs)...)
	})
	if err != nil {
		return nil, err
	}
	ep.prog.SetCarry(ep.table.carry)
	t.perModule.evals[key] = ep
	return ep, nil
}

// evaluate runs the compiled validation or test step of loader dl of n on
// b, records its logged values in res and returns what the batch-end hooks
// see.
func (c compiledEvalSteps) evaluate(kind evalKind, res *results, dl, n int, b *data.Batch) (*StepOutput, error) {
	t := c.t
	ep, err := t.evalProgramFor(kind, dl, n)
	if err != nil {
		return nil, err
	}
	outs, gid, err := ep.prog.Run(b)
	if err != nil {
		return nil, err
	}
	ms, ok := ep.metrics[gid]
	if !ok { // the graph's first run: bind its logs, those of the last trace
		if ms, err = res.bind(ep.traced, dl, n); err != nil {
			return nil, err
		}
		ep.metrics[gid] = ms
	}
	err = t.logs.recordOutputs(ms, outs[1:], b.Size)
	if err == nil {
		err = ep.table.record(gid, res, dl, n)
	}
	if err != nil {
		return nil, err
	}
	outs = outs[1+len(ms):]
	if checks := ep.labelChecks[gid]; len(checks) > 0 {
		if err := checkLabels(checks, outs[:len(checks)]); err != nil {
			return nil, err
		}
		outs = outs[len(checks):]
	}
	names := ep.outputNames[gid]
	if err := ep.table.appendMetricRows(gid, outs[len(names):]); err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return &StepOutput{stage: kind.stage}, nil
	}
	return t.fetchOutputs(kind.stage, names, outs[:len(names)]), nil
}

// predict runs the compiled predict step of loader dl on b and returns
// what the batch-end hooks see, with the prediction.
func (c compiledEvalSteps) predict(ps PredictStepper, dl int, b *data.Batch) (*StepOutput, error) {
	prog, err := c.t.predictProgram(ps, dl)
	if err != nil {
		return nil, err
	}
	outs, gid, err := prog.prog.Run(b)
	if err != nil {
		return nil, err
	}
	so := &StepOutput{stage: RunningPredict}
	if names := prog.outputNames[gid]; len(names) > 0 {
		so = c.t.fetchOutputs(RunningPredict, names, outs[1:1+len(names)])
	}
	so.Prediction = outs[0]
	return so, nil
}

// predictProgram returns the compiled predict step for loader dl.
func (t *Trainer) predictProgram(ps PredictStepper, dl int) (*evalProgram, error) {
	key := evalKey{RunningPredict, dl, 0, t.wantsOutputs(hookOnPredictBatchEnd, RunningPredict)}
	if ep, ok := t.perModule.evals[key]; ok {
		return ep, nil
	}
	ep := &evalProgram{outputNames: map[graph.GraphId][]string{}}
	var err error
	ep.prog, err = t.eng.Compile("PredictStep", engine.Evaluation, func(scope *model.Scope, inputs, labels []*graph.Node) []*graph.Node {
		s := &Step{scope: scope, graph: graphOf(inputs, labels), stage: RunningPredict, dataloaderIdx: dl}
		pred := ps.PredictStep(s, Batch{Inputs: inputs, Labels: labels})
		if pred == nil {
			panic("PredictStep returned nil")
		}
		t.checkLoaded(s.graph, engine.TrainableVariables(t.eng.Store, s.graph))
		outs := []*graph.Node{pred}
		if key.outputs {
			var names []string
			outs = append(outs, outputNodes(s.outputs, &names)...)
			ep.outputNames[s.graph.GraphId()] = names
		}
		return outs
	})
	if err != nil {
		return nil, err
	}
	t.perModule.evals[key] = ep
	return ep, nil
}
