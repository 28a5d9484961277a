// Package syncbn is the seam between the batchnorm package and volt's
// synchronised training step (Config.SyncBatchNorm, volt's
// sync_batchnorm.go): while volt traces one of the step's programs, it
// registers a Trace for the graph; batchnorm.Done asks Active for it and,
// when there is one, takes the statistics it normalises with from
// Trace.Stats instead of its own batch.
//
// # The math
//
// GoMLX's Go backend cannot all-reduce inside a program, so the statistics
// of the union batch reach the graph as inputs that the host computed. Call
// the batch normalizations a training step reaches, in trace order, points
// 0…M-1, and s_j = (mean_j, var_j) the statistics of point j over the union
// of the ranks' batches (n_j values per feature). A rank's graph is a
// function of the weights θ, its batch and s, and
//
//	mean_j = Σ_r T1_jr / n_j,  T1_jr = Σ x        (x: point j's input on rank r)
//	var_j  = Σ_r T2_jr / n_j,  T2_jr = Σ (x - μ)² (μ = mean_j, held constant)
//
// (holding μ constant is exact to first order: the derivative of the
// variance with respect to the mean is 0 at the mean). The step runs:
//
//   - the statistics sweep (RoleStats): program k normalises points j < k
//     with s_j and returns every point's local mean and M2 = Σ(x - mean)²;
//     the host gathers point k's from every rank and combines them (Chan's
//     parallel formula, in float64) into s_k. M runs.
//   - the adjoint sweep (RoleAdjoint): with L = Σ_r loss_r and λ_j = dL/ds_j,
//     each rank's F_r = loss_r + Σ_j ⟨λ_j, (T1_jr, T2_jr)⟩ / n_j has
//     Σ_r ∂F_r/∂s_k = λ_k as soon as the λ_j of j > k are in (points j ≤ k
//     do not depend on s_k), so the program returns ∂F_r/∂s and the host
//     sums point k's over the ranks, for k = M-1 … 0. M runs.
//   - the final step (RoleFinal): the training step as usual, with the
//     surrogate Σ_j ⟨λ_j, T_jr⟩ / n_j added to the loss it differentiates
//     (Trace.Surrogate): its gradient, all-reduced as data-parallel training
//     does, is that of the mean loss of one process over the union batch.
//     The running statistics take s_j, with the unbiased variance of n_j
//     values, as PyTorch's SyncBatchNorm does.
//
// Inputs: per point a [3, C] tensor (mean, biased variance, unbiased
// variance) in the point's statistics dtype (StatsDType); per point a [2, C] tensor λ_j / n_j
// (mean, variance) in the adjoint and final programs; an int32 scalar k in
// the statistics programs.
package syncbn

import (
	"fmt"
	"sync"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
)

// Role says which of the step's programs a Trace belongs to.
type Role int

const (
	// RoleStats programs return every point's local statistics.
	RoleStats Role = iota
	// RoleAdjoint programs return the gradient of the surrogate with
	// respect to the global statistics.
	RoleAdjoint
	// RoleFinal is the training step itself.
	RoleFinal
)

// Point is what a trace learnt of one batch normalization.
type Point struct {
	Scope    string       // the batch normalization's scope
	Features int          // C
	DType    dtypes.DType // of its statistics: its input's, float32 for half precision
	Count    int          // values per feature in this rank's batch
}

// Trace is the state of one program's trace.
type Trace struct {
	Role Role
	// Globals are the [3, C] inputs of the points, in order; nil in a
	// statistics program that does not know the points yet (the first
	// trace), whose points all normalise with their own batch.
	Globals []*graph.Node
	// Adjoints are the [2, C] inputs (λ_j / n_j) of the adjoint and final
	// programs.
	Adjoints []*graph.Node
	// K is the statistics program's int32 scalar input: points j < K
	// normalise with Globals[j].
	K *graph.Node

	// Points are the batch normalizations traced so far.
	Points []Point
	// Local are, per point, its [2, C] local mean and M2 (RoleStats).
	Local []*graph.Node
	// Surrogate is Σ_j ⟨λ_j, T_j⟩ / n_j (RoleAdjoint, RoleFinal), nil
	// before the first point.
	Surrogate *graph.Node
}

var active sync.Map // *graph.Graph → *Trace

// Begin makes tr the trace of g until End.
func Begin(g *graph.Graph, tr *Trace) { active.Store(g, tr) }

// End ends g's trace.
func End(g *graph.Graph) { active.Delete(g) }

// Active returns the trace of g, nil when g is not one of a synchronised
// step's programs.
func Active(g *graph.Graph) *Trace {
	if tr, ok := active.Load(g); ok {
		return tr.(*Trace)
	}
	return nil
}

// Stats returns the mean and biased variance point x (a batch
// normalization's input, with its feature axis) normalises with, and the
// unbiased variance its running variance takes, each [C] in x's dtype. It
// panics when the point does not match the inputs the trace was given.
func (tr *Trace) Stats(scope string, x *graph.Node, featureAxis int) (mean, variance, unbiased *graph.Node) {
	g := x.Graph()
	j := len(tr.Points)
	features := x.Shape().Dimensions[featureAxis]
	compute := StatsDType(x.DType())
	p := Point{Scope: scope, Features: features, DType: compute, Count: x.Shape().Size() / features}
	tr.Points = append(tr.Points, p)
	var reduceAxes []int
	for axis := range x.Rank() {
		if axis != featureAxis {
			reduceAxes = append(reduceAxes, axis)
		}
	}
	xc := graph.ConvertDType(x, compute)
	// perFeature reshapes a [C] vector to broadcast against x.
	perFeature := func(v *graph.Node) *graph.Node {
		dims := make([]int, x.Rank())
		for i := range dims {
			dims[i] = 1
		}
		dims[featureAxis] = features
		return graph.Reshape(v, dims...)
	}
	row := func(t *graph.Node, i int) *graph.Node {
		return graph.Reshape(graph.Slice(t, graph.AxisElem(i)), features)
	}
	var global *graph.Node
	if tr.Globals != nil {
		if j >= len(tr.Globals) {
			panic(fmt.Sprintf("SyncBatchNorm: the training step reached %d batch normalizations in an earlier trace, "+
				"now one more (%s); every trace of the step must reach the same ones in the same order", len(tr.Globals), scope))
		}
		global = tr.Globals[j]
		if want := global.Shape(); want.Dimensions[1] != features || want.DType != compute {
			panic(fmt.Sprintf("SyncBatchNorm: batch normalization %d (%s) has %d features of %s here, %d of %s in an "+
				"earlier trace; every trace of the step must reach the same ones in the same order",
				j, scope, features, compute, want.Dimensions[1], want.DType))
		}
	}
	out := func(m, v, u *graph.Node) (*graph.Node, *graph.Node, *graph.Node) {
		return graph.ConvertDType(m, x.DType()), graph.ConvertDType(v, x.DType()), graph.ConvertDType(u, x.DType())
	}
	if tr.Role == RoleStats {
		n := float64(p.Count)
		localMean := graph.DivScalar(graph.ReduceSum(xc, reduceAxes...), n)
		m2 := graph.ReduceSum(graph.Square(graph.Sub(xc, perFeature(localMean))), reduceAxes...)
		tr.Local = append(tr.Local, graph.Stack([]*graph.Node{localMean, m2}, 0))
		localVar := graph.DivScalar(m2, n)
		localUnbiased := graph.DivScalar(m2, max(n-1, 1))
		if global == nil {
			return out(localMean, localVar, localUnbiased)
		}
		use := graph.BroadcastToDims(graph.GreaterThan(tr.K, graph.Scalar(g, dtypes.Int32, j)), features)
		return out(graph.Where(use, row(global, 0), localMean), graph.Where(use, row(global, 1), localVar),
			graph.Where(use, row(global, 2), localUnbiased))
	}
	if global == nil || j >= len(tr.Adjoints) {
		panic(fmt.Sprintf("SyncBatchNorm: batch normalization %d (%s) was not reached by the statistics sweep; every "+
			"trace of the step must reach the same ones in the same order", j, scope))
	}
	mean, variance, unbiased = row(global, 0), row(global, 1), row(global, 2)
	lambda := tr.Adjoints[j]
	t1 := graph.ReduceSum(xc, reduceAxes...)
	t2 := graph.ReduceSum(graph.Square(graph.Sub(xc, perFeature(graph.StopGradient(mean)))), reduceAxes...)
	term := graph.Add(graph.ReduceAllSum(graph.Mul(row(lambda, 0), t1)), graph.ReduceAllSum(graph.Mul(row(lambda, 1), t2)))
	if tr.Surrogate == nil {
		tr.Surrogate = term
	} else {
		tr.Surrogate = graph.Add(tr.Surrogate, graph.ConvertDType(term, tr.Surrogate.DType()))
	}
	return out(mean, variance, unbiased)
}

// StatsDType is the dtype of the statistics of an input of dtype dt: dt,
// float32 for half precision.
func StatsDType(dt dtypes.DType) dtypes.DType {
	if dt == dtypes.Float16 || dt == dtypes.BFloat16 {
		return dtypes.Float32
	}
	return dt
}
