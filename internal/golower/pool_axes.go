package golower

import (
	"fmt"
	"slices"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
)

// Non-overlapping pooling one windowed axis at a time.
//
// LowerReduceWindow reduces all window axes of the split value at once,
// a reduction over non-adjacent axes, which the Go backend runs through
// its general per-element index iterator; LowerSelectAndScatter moves the
// window axes together with two transposes and spreads the gradient with
// an Iota and a broadcasting Equal, which also take the backend's general
// paths. The CPU profile of the CNN's step (batch 64, two 2×2 max-poolings)
// had these ops at about a third of the step.
//
// A window reduction is a sequence of one-axis reductions: viewing the
// value as [A, w, B] (A the axes before the windowed one times its number
// of windows, w the window, B the axes after it), a reduction over axis 1
// is the backend's "middle" pattern, a plain loop over contiguous rows.
// Max and min pooling reduce each windowed axis in turn, innermost first.
//
// The gradient follows the same sequence backwards. The Go backend's
// SelectAndScatter gives each window's value of source to the window's
// first maximum in row-major order (a later element takes over only when
// it is greater, or when it is NaN: the last NaN wins). That choice is
// lexicographic, so it factors by axes: the first maximum of a window is
// the first maximum of its first row (along the outer windowed axis)
// whose maximum is the window's, and NaN propagates through the row
// maxima the same way. So for each level, outermost first, ArgMinMax
// (which has the backend's tie and NaN rule) picks the row of the level's
// input [A, w, B] along axis 1, and the gradient is spread with one
// Equal to a scalar and one Where per window position, concatenated along
// axis 1: all of them contiguous loops.

// axisLevel is one one-axis reduction of poolAxes: its input, viewed as
// [a, w, b] (or [a, w] when b is 1), reduced over axis 1.
type axisLevel struct {
	a, w, b int
	in      compute.Value // the level's input, in its own dimensions
	inDims  []int
}

// view returns the dimensions of the level's [A, w, B] view.
func (l axisLevel) view() []int {
	if l.b == 1 {
		return []int{l.a, l.w}
	}
	return []int{l.a, l.w, l.b}
}

// poolAxes crops x to whole windows and reduces it one windowed axis at a
// time, innermost first; it returns the result and the levels, in order.
func poolAxes(f compute.Function, x compute.Value, dims, window []int,
	reduce func(x compute.Value, axis int) (compute.Value, error)) (compute.Value, []axisLevel, error) {
	l := newPoolLayout(dims, window)
	cur, err := cropLow(f, x, dims, l.cropped)
	if err != nil {
		return nil, nil, err
	}
	curDims := slices.Clone(l.cropped)
	var levels []axisLevel
	for axis := len(dims) - 1; axis >= 0; axis-- {
		w := window[axis]
		if w == 1 {
			continue
		}
		level := axisLevel{a: prod(curDims[:axis]) * curDims[axis] / w, w: w, b: prod(curDims[axis+1:]),
			in: cur, inDims: slices.Clone(curDims)}
		levels = append(levels, level)
		v, err := f.Reshape(cur, level.view()...)
		if err != nil {
			return nil, nil, err
		}
		if cur, err = reduce(v, 1); err != nil {
			return nil, nil, err
		}
		curDims[axis] /= w
		if cur, err = f.Reshape(cur, curDims...); err != nil {
			return nil, nil, err
		}
	}
	return cur, levels, nil
}

// cropLow keeps the leading keep[i] of each axis of x (dimensions dims):
// with cropHigh's Gather of contiguous runs where the first and last axes
// are whole, else with a Slice.
func cropLow(f compute.Function, x compute.Value, dims, keep []int) (compute.Value, error) {
	rank := len(dims)
	switch {
	case slices.Equal(dims, keep):
		return x, nil
	case rank >= 3 && dims[0] == keep[0] && dims[rank-1] == keep[rank-1]:
		return cropHigh(f, x, dims, keep)
	}
	return f.Slice(x, make([]int, rank), keep, nil)
}

// LowerReduceWindowAxes emits a non-overlapping max/min/sum pooling (see
// PoolSupported) as a crop and one reduction per windowed axis (see
// above); it computes what LowerReduceWindow does.
func LowerReduceWindowAxes(f compute.Function, x compute.Value, reduction compute.ReduceOpType,
	windowDimensions []int) (compute.Value, error) {
	shape, err := f.Shape(x)
	if err != nil {
		return nil, err
	}
	var reduce func(compute.Value, int) (compute.Value, error)
	switch reduction {
	case compute.ReduceOpMax:
		reduce = func(v compute.Value, axis int) (compute.Value, error) { return f.ReduceMax(v, axis) }
	case compute.ReduceOpMin:
		reduce = func(v compute.Value, axis int) (compute.Value, error) { return f.ReduceMin(v, axis) }
	case compute.ReduceOpSum:
		reduce = func(v compute.Value, axis int) (compute.Value, error) { return f.ReduceSum(v, axis) }
	default:
		return nil, fmt.Errorf("golower: pooling reduction %s is not lowered (only Max, Min and Sum)", reduction)
	}
	y, _, err := poolAxes(f, x, shape.Dimensions, windowDimensions, reduce)
	return y, err
}

// LowerSelectAndScatterAxes emits the gradient of a non-overlapping max
// (or min) pooling one windowed axis at a time (see above); it computes
// what LowerSelectAndScatter does, and what the Go backend's
// SelectAndScatterMax (Min) does, ties and NaN included.
func LowerSelectAndScatterAxes(f compute.Function, operand, source compute.Value, windowDimensions []int,
	isMin bool) (compute.Value, error) {
	return lowerSelectAndScatterAxes(f, operand, source, windowDimensions, isMin, true)
}

// lowerSelectAndScatterAxes is LowerSelectAndScatterAxes; pairs=false
// spreads windows of 2 with ArgMinMax too (scatterWindows).
func lowerSelectAndScatterAxes(f compute.Function, operand, source compute.Value, windowDimensions []int,
	isMin, pairs bool) (compute.Value, error) {
	shape, err := f.Shape(operand)
	if err != nil {
		return nil, err
	}
	reduce := func(v compute.Value, axis int) (compute.Value, error) {
		if isMin {
			return f.ReduceMin(v, axis)
		}
		return f.ReduceMax(v, axis)
	}
	_, levels, err := poolAxes(f, operand, shape.Dimensions, windowDimensions, reduce)
	if err != nil {
		return nil, err
	}
	zero, err := f.Constant(zeroSlice(shape.DType))
	if err != nil {
		return nil, err
	}
	g := source
	for i := len(levels) - 1; i >= 0; i-- {
		level := levels[i]
		v, err := f.Reshape(level.in, level.view()...)
		if err != nil {
			return nil, err
		}
		kept := []int{level.a, level.b} // g, and each half of v
		if level.b == 1 {
			kept = kept[:1]
		}
		if g, err = f.Reshape(g, kept...); err != nil {
			return nil, err
		}
		var parts []compute.Value
		if level.w == 2 && pairs {
			parts, err = scatterPairs(f, v, g, zero, level, isMin)
		} else {
			parts, err = scatterWindows(f, v, g, zero, level, isMin)
		}
		if err != nil {
			return nil, err
		}
		if g, err = f.Concatenate(1, parts...); err != nil {
			return nil, err
		}
		if g, err = f.Reshape(g, level.inDims...); err != nil {
			return nil, err
		}
	}
	cropped := newPoolLayout(shape.Dimensions, windowDimensions).cropped
	if slices.Equal(cropped, shape.Dimensions) {
		return g, nil
	}
	pads := make([]compute.PadAxis, shape.Rank())
	for i := range pads {
		pads[i].End = shape.Dimensions[i] - cropped[i]
	}
	return f.Pad(g, zero, pads...)
}

// scatterWindows spreads g ([a, b], or [a]) over the level's input v ([a, w, b] or
// [a, w]) to the position ArgMinMax picks along axis 1; it returns the
// w parts [a, 1, b] of the result.
func scatterWindows(f compute.Function, v, g, zero compute.Value, level axisLevel,
	isMin bool) ([]compute.Value, error) {
	chosen, err := f.ArgMinMax(v, 1, dtypes.Int32, isMin)
	if err != nil {
		return nil, err
	}
	parts := make([]compute.Value, level.w) // chosen is [a, b], or [a]
	for j := range parts {
		at, err := f.Constant([]int32{int32(j)}) // a scalar
		if err != nil {
			return nil, err
		}
		mask, err := f.Equal(chosen, at)
		if err != nil {
			return nil, err
		}
		part, err := f.Where(mask, g, zero)
		if err != nil {
			return nil, err
		}
		if parts[j], err = f.Reshape(part, level.a, 1, level.b); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// scatterPairs is scatterWindows for windows of 2 without ArgMinMax (a
// branchy loop on random data): the two halves p, q of v are gathered as
// contiguous runs, and q is chosen where the backend's rule takes it over,
// q > p or q is NaN (q < p for min pooling).
func scatterPairs(f compute.Function, v, g, zero compute.Value, level axisLevel,
	isMin bool) ([]compute.Value, error) {
	// Gathered from v itself: the same Reshape node as the forward's
	// reduction, where a second Reshape of it would copy it (the Go
	// backend copies a Reshape of a value that has other users).
	offsetAxes, sliceSizes := []int{1}, []int{1, 1, level.b}
	if level.b == 1 {
		offsetAxes, sliceSizes = nil, []int{1, 1}
	}
	halves := make([]compute.Value, 2)
	for j := range halves {
		starts := make([]int32, 0, 2*level.a)
		for i := range level.a {
			starts = append(starts, int32(i), int32(j))
		}
		indices, err := f.Constant(starts, level.a, 2)
		if err != nil {
			return nil, err
		}
		if halves[j], err = f.Gather(v, indices, 1, offsetAxes, []int{0, 1}, []int{0, 1}, sliceSizes,
			true); err != nil {
			return nil, err
		}
	}
	p, q := halves[0], halves[1]
	var better compute.Value
	var err error
	if isMin {
		better, err = f.LessThan(q, p)
	} else {
		better, err = f.GreaterThan(q, p)
	}
	if err != nil {
		return nil, err
	}
	isNaN, err := f.NotEqual(q, q)
	if err != nil {
		return nil, err
	}
	// better OR isNaN, as a Where: the backend's LogicalOr takes its
	// general broadcasting path, its Where a parallel loop.
	takeQ, err := f.Where(isNaN, isNaN, better)
	if err != nil {
		return nil, err
	}
	parts := make([]compute.Value, 2)
	if parts[0], err = f.Where(takeQ, zero, g); err != nil {
		return nil, err
	}
	if parts[1], err = f.Where(takeQ, g, zero); err != nil {
		return nil, err
	}
	for j := range parts {
		if parts[j], err = f.Reshape(parts[j], level.a, 1, level.b); err != nil {
			return nil, err
		}
	}
	return parts, nil
}
