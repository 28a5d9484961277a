package volt

import (
	"fmt"
	"slices"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/dist"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/internal/syncbn"
)

// Synchronised batch normalization (Config.SyncBatchNorm) under data-parallel
// training: every batchnorm layer of the training step normalises with the
// statistics of the union of the ranks' batches, and the gradients are those
// of one process over that union. GoMLX's Go backend cannot all-reduce
// inside a program, so a step with M batch normalizations runs as programs
// with host collectives between them (internal/syncbn has the math):
//
//   - M runs of the statistics program (the forward pass; the k-th run
//     normalises the first k points with the union's statistics and returns
//     the (k+1)-th point's local mean and M2, which the ranks all-gather and
//     combine);
//   - M runs of the adjoint program (the backward pass of the loss with
//     respect to the statistics, last point first, all-reduced);
//   - the training step (gradient program, gradient all-reduce, apply
//     program) with the statistics and adjoints as inputs.
//
// The first two leave the variables (random state included) as they found
// them, so every program draws the same random numbers as the step. The
// points are the batch normalizations the step reaches, in trace order; the
// first trace learns them, and every later trace must reach the same ones.

// syncSteps runs one optimizer's training step synchronised.
type syncSteps struct {
	c    *compiledSteps
	tp   *trainProgram
	opt  int
	name string
	// points are the batch normalizations of the step, known after the
	// first trace (known); off: there are none, the step runs as usual.
	points []syncbn.Point
	known  bool
	off    bool
	// counts are, per statistics graph, each point's values per feature.
	counts         map[graph.GraphId][]int
	stats, adjoint *engine.Program
	// The values of the current batch: per point its statistics [3, C],
	// its adjoints [2, C] (λ/n) and the union's count n.
	globals, lambdas []*tensors.Tensor
	n                []float64
	batch            data.Batch
}

// extras returns how many inputs after the batch's a program of role takes.
func (ss *syncSteps) extras(role syncbn.Role) int {
	if !ss.known || ss.off {
		return 0
	}
	if role == syncbn.RoleStats {
		return len(ss.points) + 1
	}
	return 2 * len(ss.points)
}

// begin starts the trace of a program of role on the graph of inputs and
// labels: it strips the synchronisation inputs from inputs and registers
// the trace. end ends it and checks the points the module reached.
func (ss *syncSteps) begin(role syncbn.Role, inputs, labels []*graph.Node) (batchInputs []*graph.Node, tr *syncbn.Trace, end func()) {
	g := graphOf(inputs, labels)
	n := ss.extras(role)
	tr = &syncbn.Trace{Role: role}
	if n > 0 {
		extra := inputs[len(inputs)-n:]
		inputs = inputs[:len(inputs)-n]
		m := len(ss.points)
		tr.Globals = extra[:m]
		if role == syncbn.RoleStats {
			tr.K = extra[m]
		} else {
			tr.Adjoints = extra[m:]
		}
	} else if role != syncbn.RoleStats {
		return inputs, nil, func() {}
	}
	syncbn.Begin(g, tr)
	return inputs, tr, func() {
		syncbn.End(g)
		ss.checkPoints(g, tr.Points)
	}
}

// checkPoints records the points of the first trace and checks those of
// the others against them.
func (ss *syncSteps) checkPoints(g *graph.Graph, points []syncbn.Point) {
	if !ss.known {
		ss.points, ss.known, ss.off = points, true, len(points) == 0
		if ss.off {
			ss.c.t.sayOnce("sync-batchnorm-none", "volt: Config.SyncBatchNorm is set but the training step has no "+
				"batchnorm layer (package batchnorm); nothing is synchronised")
		}
	}
	same := len(points) == len(ss.points)
	for i := 0; same && i < len(points); i++ {
		same = points[i].Scope == ss.points[i].Scope && points[i].Features == ss.points[i].Features &&
			points[i].DType == ss.points[i].DType
	}
	if !same {
		panic(fmt.Sprintf("Config.SyncBatchNorm: this trace of the training step reaches the batch normalizations %s, "+
			"an earlier one %s; every trace must reach the same ones in the same order", pointNames(points), pointNames(ss.points)))
	}
	counts := make([]int, len(points))
	for i, p := range points {
		counts[i] = p.Count
	}
	ss.counts[g.GraphId()] = counts
}

func pointNames(points []syncbn.Point) string {
	names := make([]string, len(points))
	for i, p := range points {
		names[i] = fmt.Sprintf("%s[%d %s]", p.Scope, p.Features, p.DType)
	}
	return fmt.Sprintf("%q", names)
}

// traceStage traces the module's training step as a program of role
// (statistics or adjoints), which changes no variable.
func (ss *syncSteps) traceStage(role syncbn.Role, scope *model.Scope, inputs, labels []*graph.Node) []*graph.Node {
	c, t := ss.c, ss.c.t
	inputs, tr, end := ss.begin(role, inputs, labels)
	s := &Step{scope: scope, graph: graphOf(inputs, labels), stage: RunningTrain, optimizerIdx: ss.opt, trainer: t,
		metricsOff: true}
	loss := t.module.TrainingStep(s, Batch{Inputs: inputs, Labels: labels, Parts: c.parts})
	end()
	engine.KeepVariables(t.eng.Store, s.graph)
	if role == syncbn.RoleStats {
		if len(tr.Local) == 0 {
			return []*graph.Node{graph.ScalarZero(s.graph, dtypes.Float32)}
		}
		return tr.Local
	}
	if loss == nil || !loss.Shape().IsScalar() {
		panic("TrainingStep must return a floating-point scalar loss")
	}
	objective := loss
	if tr.Surrogate != nil {
		objective = graph.Add(loss, graph.ConvertDType(tr.Surrogate, loss.DType()))
	}
	return graph.Gradient(objective, tr.Globals...)
}

// program returns the statistics or the adjoint program, compiling it on
// first use.
func (ss *syncSteps) program(role syncbn.Role) (*engine.Program, error) {
	p, name := &ss.stats, ss.name+"[batch statistics]"
	if role == syncbn.RoleAdjoint {
		p, name = &ss.adjoint, ss.name+"[batch statistics gradients]"
	}
	if *p != nil {
		return *p, nil
	}
	prog, err := ss.c.t.eng.Compile(name, engine.Training, func(scope *model.Scope, inputs, labels []*graph.Node) []*graph.Node {
		return ss.traceStage(role, scope, inputs, labels)
	})
	if err != nil {
		return nil, err
	}
	*p = prog
	return prog, nil
}

// compile traces the statistics program for b (which learns the points)
// and then the training step, with zero statistics.
func (ss *syncSteps) compile(b *data.Batch) error {
	if !ss.known {
		p, err := ss.program(syncbn.RoleStats)
		if err != nil {
			return err
		}
		p.SetRawTail(0)
		if err := p.Compile(b); err != nil {
			return err
		}
	}
	if ss.off {
		return ss.tp.step.Compile(b)
	}
	ss.reset()
	ss.tp.step.SetRawTail(2 * len(ss.points))
	return ss.tp.step.Compile(ss.inputs(b, ss.globals, ss.lambdas))
}

// reset sets every point's statistics and adjoints to zeros.
func (ss *syncSteps) reset() {
	ss.globals, ss.lambdas, ss.n = ss.globals[:0], ss.lambdas[:0], ss.n[:0]
	for _, p := range ss.points {
		ss.globals = append(ss.globals, tensors.FromShape(shapes.Make(p.DType, 3, p.Features)))
		ss.lambdas = append(ss.lambdas, tensors.FromShape(shapes.Make(p.DType, 2, p.Features)))
		ss.n = append(ss.n, 0)
	}
}

// inputs returns b with extra appended to its inputs.
func (ss *syncSteps) inputs(b *data.Batch, extra ...[]*tensors.Tensor) *data.Batch {
	ss.batch = data.Batch{Inputs: append(ss.batch.Inputs[:0], b.Inputs...), Labels: b.Labels, Size: b.Size, Parts: b.Parts}
	for _, e := range extra {
		ss.batch.Inputs = append(ss.batch.Inputs, e...)
	}
	return &ss.batch
}

// run runs the synchronised step on b.
func (ss *syncSteps) run(b *data.Batch) ([]*tensors.Tensor, graph.GraphId, engine.UpdateTrace, error) {
	if !ss.known {
		if err := ss.compile(b); err != nil {
			return nil, 0, engine.UpdateTrace{}, err
		}
	}
	if ss.off {
		return ss.tp.step.Run(b)
	}
	stop := ss.c.t.profile(actSyncBatchNorm)
	err := ss.sweep(b)
	stop()
	if err != nil {
		return nil, 0, engine.UpdateTrace{}, err
	}
	ss.tp.step.SetRawTail(2 * len(ss.points))
	return ss.tp.step.Run(ss.inputs(b, ss.globals, ss.lambdas))
}

// sweep computes the union's statistics of every point (the statistics
// sweep) and their adjoints (the adjoint sweep) for b.
func (ss *syncSteps) sweep(b *data.Batch) error {
	m := len(ss.points)
	ss.reset()
	stats, err := ss.program(syncbn.RoleStats)
	if err != nil {
		return err
	}
	for k := range m {
		stats.SetRawTail(m + 1)
		outs, gid, err := stats.Run(ss.inputs(b, ss.globals, []*tensors.Tensor{tensors.FromScalar(int32(k))}))
		if err != nil {
			return err
		}
		if err := ss.combine(k, outs[k], ss.counts[gid][k]); err != nil {
			return err
		}
	}
	adjoint, err := ss.program(syncbn.RoleAdjoint)
	if err != nil {
		return err
	}
	for k := m - 1; k >= 0; k-- {
		adjoint.SetRawTail(2 * m)
		outs, _, err := adjoint.Run(ss.inputs(b, ss.globals, ss.lambdas))
		if err != nil {
			return err
		}
		if err := ss.sumAdjoint(k, outs[k]); err != nil {
			return err
		}
	}
	return nil
}

// combine gathers point k's local mean and M2 ([2, C]) and count from every
// rank and sets its statistics to the union's (Chan et al.'s parallel
// formula, in float64): n = Σ n_r, mean = Σ n_r·mean_r / n,
// M2 = Σ M2_r + Σ n_r·(mean_r - mean)², var = M2/n, unbiased M2/(n-1).
func (ss *syncSteps) combine(k int, local *tensors.Tensor, count int) error {
	p := ss.points[k]
	c := p.Features
	values, err := flatFloat64(local)
	if err != nil {
		return err
	}
	mine := append([]float64{float64(count)}, values...)
	all, err := ss.c.t.ddp.group.AllGatherFloat64(mine)
	if err != nil {
		return fmt.Errorf("SyncBatchNorm: gathering the batch statistics of %s: %w", p.Scope, err)
	}
	ranks := len(all) / len(mine)
	n := 0.0
	mean := make([]float64, c)
	for r := range ranks {
		row := all[r*len(mine):]
		n += row[0]
		for i := range c {
			mean[i] += row[0] * row[1+i]
		}
	}
	if n < 2 {
		return fmt.Errorf("SyncBatchNorm: batch normalization %s has %g value(s) per feature over all ranks; "+
			"training needs more than 1", p.Scope, n)
	}
	for i := range mean {
		mean[i] /= n
	}
	out := make([]float64, 3*c)
	copy(out, mean)
	for r := range ranks {
		row := all[r*len(mine):]
		for i := range c {
			d := row[1+i] - mean[i]
			out[c+i] += row[1+c+i] + row[0]*d*d
		}
	}
	for i := range c {
		m2 := out[c+i]
		out[c+i], out[2*c+i] = m2/n, m2/(n-1)
	}
	ss.n[k] = n
	ss.globals[k] = tensorOf(p.DType, out, 3, c)
	return nil
}

// sumAdjoint sums point k's gradient with respect to its statistics ([3,
// C]: mean, variance, unbiased variance) over the ranks and sets its
// adjoints to the mean and variance rows divided by n.
func (ss *syncSteps) sumAdjoint(k int, grad *tensors.Tensor) error {
	p := ss.points[k]
	c := p.Features
	values, err := flatFloat64(grad)
	if err != nil {
		return err
	}
	values = values[:2*c]
	if err := ss.c.t.ddp.group.AllReduceFloat64(values, dist.Sum); err != nil {
		return fmt.Errorf("SyncBatchNorm: summing the statistics' gradients of %s: %w", p.Scope, err)
	}
	for i := range values {
		values[i] /= ss.n[k]
	}
	ss.lambdas[k] = tensorOf(p.DType, values, 2, c)
	return nil
}

// flatFloat64 returns a float32 or float64 tensor's values as float64.
func flatFloat64(t *tensors.Tensor) ([]float64, error) {
	switch t.DType() {
	case dtypes.Float64:
		return tensors.CopyFlatData[float64](t)
	case dtypes.Float32:
		f, err := tensors.CopyFlatData[float32](t)
		if err != nil {
			return nil, err
		}
		out := make([]float64, len(f))
		for i, v := range f {
			out[i] = float64(v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("SyncBatchNorm: statistics of dtype %s (float32 or float64 expected)", t.DType())
}

// tensorOf returns values as a tensor of dtype (float32 or float64) and
// dims.
func tensorOf(dtype dtypes.DType, values []float64, dims ...int) *tensors.Tensor {
	if dtype == dtypes.Float64 {
		return tensors.FromFlatDataAndDimensions(slices.Clone(values), dims...)
	}
	f := make([]float32, len(values))
	for i, v := range values {
		f[i] = float32(v)
	}
	return tensors.FromFlatDataAndDimensions(f, dims...)
}
