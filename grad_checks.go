package volt

// This file holds the gradient checks traced into the training step: the
// p-norms that TrackGradNorm logs and the finite flags of TerminateOnNaN and
// DetectAnomaly.

import (
	"math"
	"strconv"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/optim"
)

// gradNorms returns the TrackGradNorm outputs: each gradient's p-norm, then
// the total, named as Lightning names them.
func (a *automaticOptimization) gradNorms(grads []Gradient, info *traceInfo) []*graph.Node {
	p := a.t.cfg.TrackGradNorm
	if p == 0 {
		return nil
	}
	prefix := "grad_" + pythonFloat(p) + "_norm"
	var outs []*graph.Node
	for _, g := range grads {
		outs = append(outs, graph.ConvertDType(optim.NormOf(g.Value, p), g.Value.DType()))
		info.normNames = append(info.normNames, prefix+g.Variable.Path())
	}
	outs = append(outs, optim.GradNorm(gradientValues(grads), p))
	info.normNames = append(info.normNames, prefix+"_total")
	for i := range outs {
		outs[i], _ = engine.ToScalar(outs[i])
	}
	return outs
}

// pythonFloat formats p as Python's str(float) does: 2.0, 0.5, inf.
func pythonFloat(p float64) string {
	if math.IsInf(p, 1) {
		return "inf"
	}
	s := strconv.FormatFloat(p, 'f', -1, 64)
	if p == math.Trunc(p) {
		s += ".0"
	}
	return s
}

// finiteFlags returns a bool vector: whether each node is entirely finite.
func finiteFlags(nodes []*graph.Node) *graph.Node {
	flags := make([]*graph.Node, len(nodes))
	for i, n := range nodes {
		flags[i] = graph.LogicalAll(graph.IsFinite(n))
	}
	return graph.Stack(flags, 0)
}
