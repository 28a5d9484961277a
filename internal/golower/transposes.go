package golower

import (
	"slices"

	"github.com/gomlx/compute"
)

// The Go backend's Transpose has fast kernels for a few permutations,
// recognised by their literal rank and axes, and moves every other one
// element by element through a TransposeIterator. The planner here gives a
// permutation the cheapest of: the backend's op as it is; the same
// permutation on the operand reshaped to its reduced form (adjacent axes
// that stay adjacent merged, axes of size 1 dropped), which often is one
// of the fast cases; or two fast transposes in a row. Costs are CPU
// nanoseconds per element of float32, measured on the Go backend at one
// thread (an Intel Xeon with AVX-512): a copy of contiguous runs about 1.1,
// the element iterator about 4.2, and the 2D kernel about 2, but 6–8 when
// its output rows are a multiple of 2 KiB long (cache set conflicts:
// [1536, 64] → [64, 1536] takes 5.8 ns an element, [1280, 64] 2.3 ns).
const (
	costCopy    = 1.0 // identity, or a copy of long contiguous runs
	costPerRun  = 6.0 // extra per contiguous run moved by a run-copying kernel
	costTile2D  = 2.0 // the 2D [1, 0] kernel
	costAlias2D = 6.5 // …when its output rows are a multiple of 2 KiB long
	costGeneric = 4.2 // the element-by-element iterator
	// costReshapeCopy is the cost of reshaping the operand: the backend
	// copies a reshaped value that still has other users (and reuses the
	// buffer when it does not, which the planner cannot know).
	costReshapeCopy = 0.5
)

// transposeStep is one backend Transpose of a value reshaped to dims.
type transposeStep struct {
	dims, perm []int
}

// transposePlan is how to emit a permutation: the steps, each on the
// previous one's result reshaped to its dims (a reshape of an operand
// used once is free).
type transposePlan struct {
	steps []transposeStep
	cost  float64 // estimated, per transposeStep cost model
}

// elemBytes is the element size the 2D kernel's cost assumes (float32).
const elemBytes = 4

// backendTransposeCost is the estimated cost of the backend's Transpose
// of a value of dims by perm, taken literally.
func backendTransposeCost(dims, perm []int) float64 {
	size := float64(prod(dims))
	rank := len(dims)
	switch {
	case size == 0 || isIdentity(perm):
		return size * costCopy
	case rank == 4 && slices.Equal(perm, []int{0, 2, 1, 3}),
		rank == 3 && slices.Equal(perm, []int{1, 0, 2}):
		run := dims[rank-1]
		return size*costCopy + size/float64(run)*costPerRun
	case rank == 2:
		// The output rows are dims[0] long.
		if dims[0]*elemBytes%2048 == 0 {
			return size * costAlias2D
		}
		return size * costTile2D
	case rank > 2 && perm[rank-1] == rank-1:
		run := dims[rank-1]
		return size*costCopy + size/float64(run)*costPerRun
	}
	return size * costGeneric
}

// reducePermutation merges the axes of dims that stay adjacent and in
// order under perm and drops the axes of size 1: the same data movement
// on fewer axes. It returns the reduced dimensions and permutation.
func reducePermutation(dims, perm []int) (rdims, rperm []int) {
	// Drop size-1 axes, renumbering the remaining ones.
	keep := make([]int, len(dims)) // old axis → new axis, or -1
	var d []int
	for axis, n := range dims {
		if n == 1 {
			keep[axis] = -1
			continue
		}
		keep[axis] = len(d)
		d = append(d, n)
	}
	var p []int
	for _, axis := range perm {
		if keep[axis] >= 0 {
			p = append(p, keep[axis])
		}
	}
	if len(p) == 0 {
		return []int{}, []int{}
	}
	// Merge runs of the output whose input axes are consecutive.
	var groups [][]int // per output group, its input axes in order
	for i, axis := range p {
		if i > 0 && axis == groups[len(groups)-1][len(groups[len(groups)-1])-1]+1 {
			groups[len(groups)-1] = append(groups[len(groups)-1], axis)
			continue
		}
		groups = append(groups, []int{axis})
	}
	// The groups, ordered by their first input axis, are the reduced input axes.
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return groups[a][0] - groups[b][0] })
	rdims = make([]int, len(groups))
	newAxis := make([]int, len(groups)) // group → reduced input axis
	for reduced, g := range order {
		newAxis[g] = reduced
		rdims[reduced] = 1
		for _, axis := range groups[g] {
			rdims[reduced] *= d[axis]
		}
	}
	rperm = make([]int, len(groups))
	for i := range groups {
		rperm[i] = newAxis[i]
	}
	return rdims, rperm
}

// planTranspose returns the cheapest plan for transposing a value of dims
// by perm.
func planTranspose(dims, perm []int) transposePlan {
	best := transposePlan{steps: []transposeStep{{dims, perm}}, cost: backendTransposeCost(dims, perm)}
	rdims, rperm := reducePermutation(dims, perm)
	if isIdentity(rperm) {
		// A pure reshape: at most a copy.
		return transposePlan{cost: 0}
	}
	reshapeCost := 0.0
	if !slices.Equal(rdims, dims) {
		reshapeCost = float64(prod(dims)) * costReshapeCopy
	}
	if c := reshapeCost + backendTransposeCost(rdims, rperm); c < best.cost {
		best = transposePlan{steps: []transposeStep{{rdims, rperm}}, cost: c}
	}
	// Two steps: rdims by q, then the result by q⁻¹∘rperm, each reduced.
	if len(rperm) > 6 {
		return best
	}
	for q := range permutations(len(rperm)) {
		if isIdentity(q) || slices.Equal(q, rperm) {
			continue
		}
		d1, p1 := reducePermutation(rdims, q)
		mid := permuteDims(rdims, q)
		second := make([]int, len(rperm)) // mid axis i of the output is rperm[i] of rdims = position of it in q
		where := make([]int, len(q))
		for i, axis := range q {
			where[axis] = i
		}
		for i, axis := range rperm {
			second[i] = where[axis]
		}
		d2, p2 := reducePermutation(mid, second)
		c := backendTransposeCost(d1, p1) + backendTransposeCost(d2, p2)
		if !slices.Equal(d1, dims) {
			c += reshapeCost
		}
		if c < best.cost {
			best = transposePlan{steps: []transposeStep{{d1, p1}, {d2, p2}}, cost: c}
		}
	}
	return best
}

// transposeValue emits x (of dims) transposed by perm following plan.
func emitTranspose(f compute.Function, x compute.Value, dims, perm []int, plan transposePlan) (compute.Value, error) {
	outDims := permuteDims(dims, perm)
	var err error
	current := dims
	for _, step := range plan.steps {
		if !slices.Equal(current, step.dims) {
			if x, err = f.Reshape(x, step.dims...); err != nil {
				return nil, err
			}
		}
		if x, err = f.Transpose(x, step.perm...); err != nil {
			return nil, err
		}
		current = permuteDims(step.dims, step.perm)
	}
	if !slices.Equal(current, outDims) {
		if x, err = f.Reshape(x, outDims...); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// transpose emits x transposed by perm on f by the cheapest plan (the
// backend's own op when nothing is cheaper); plans are off when
// lowering.NoTransposePlans.
func (l Lowering) transpose(f compute.Function, x compute.Value, perm []int) (compute.Value, error) {
	if l.NoTransposePlans {
		return f.Transpose(x, perm...)
	}
	shape, err := f.Shape(x)
	if err != nil {
		return nil, err
	}
	if shape.IsDynamic() || len(perm) != shape.Rank() {
		return f.Transpose(x, perm...) // let the backend report a bad permutation
	}
	return emitTranspose(f, x, shape.Dimensions, perm, planTranspose(shape.Dimensions, perm))
}

// Transpose implements compute.Function: the permutation is emitted by
// the cheapest plan of the backend's kernels (planTranspose).
func (f *function) Transpose(x compute.Value, permutation ...int) (compute.Value, error) {
	return f.builder.backend.lowering.transpose(f.Function, x, permutation)
}

func isIdentity(perm []int) bool {
	for i, p := range perm {
		if p != i {
			return false
		}
	}
	return true
}

// permuteDims returns the dimensions of a value of dims transposed by perm.
func permuteDims(dims, perm []int) []int {
	out := make([]int, len(perm))
	for i, axis := range perm {
		out[i] = dims[axis]
	}
	return out
}

// permutations yields every permutation of 0…n-1 (the yielded slice is
// reused).
func permutations(n int) func(yield func([]int) bool) {
	return func(yield func([]int) bool) {
		p := make([]int, n)
		for i := range p {
			p[i] = i
		}
		var gen func(k int) bool
		gen = func(k int) bool {
			if k == n {
				return yield(p)
			}
			for i := k; i < n; i++ {
				p[k], p[i] = p[i], p[k]
				if !gen(k + 1) {
					return false
				}
				p[k], p[i] = p[i], p[k]
			}
			return true
		}
		gen(0)
	}
}
