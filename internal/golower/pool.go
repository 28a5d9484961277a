package golower

import (
	"fmt"
	"slices"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
)

// PoolSupported reports whether a window reduction (ReduceWindow or its
// gradient SelectAndScatter) over a value of shape x is one that
// LowerReduceWindow and LowerSelectAndScatter handle: non-overlapping
// windows (strides equal to the window), no padding, no dilations,
// floating-point dtype, static shape.
func PoolSupported(x shapes.Shape, windowDimensions, strides, inputDilations, windowDilations []int,
	paddings [][2]int) bool {
	if x.IsDynamic() || (x.DType != dtypes.Float32 && x.DType != dtypes.Float64) {
		return false
	}
	rank := x.Rank()
	if len(windowDimensions) != rank {
		return false
	}
	for i := range rank {
		w := windowDimensions[i]
		if w < 1 || w > x.Dimensions[i] {
			return false
		}
		if len(strides) > 0 && strides[i] != w {
			return false
		}
		if len(strides) == 0 && w != 1 {
			return false
		}
		if len(inputDilations) > 0 && inputDilations[i] != 1 || len(windowDilations) > 0 && windowDilations[i] != 1 {
			return false
		}
		if len(paddings) > 0 && paddings[i] != [2]int{} {
			return false
		}
	}
	return true
}

// poolLayout splits every axis of x with a window w>1 into [d/w, w] after
// cropping d to a multiple of w.
type poolLayout struct {
	cropped   []int // x's dimensions cropped to multiples of the windows
	split     []int // dimensions after splitting each windowed axis
	outer     []int // positions in split of the pooled (outer) axes, one per x axis
	windows   []int // positions in split of the window axes
	lastOuter int   // position in split of the outer axis of the last windowed x axis
}

func newPoolLayout(dims, window []int) poolLayout {
	var l poolLayout
	for i, d := range dims {
		w := window[i]
		l.cropped = append(l.cropped, d/w*w)
		l.outer = append(l.outer, len(l.split))
		l.split = append(l.split, d/w)
		if w > 1 {
			l.lastOuter = len(l.split) - 1
			l.windows = append(l.windows, len(l.split))
			l.split = append(l.split, w)
		}
	}
	return l
}

// cropAndSplit crops x to the layout and reshapes it to split.
func (l poolLayout) cropAndSplit(f compute.Function, x compute.Value, dims []int) (compute.Value, error) {
	var err error
	if !slices.Equal(dims, l.cropped) {
		if x, err = f.Slice(x, make([]int, len(dims)), l.cropped, nil); err != nil {
			return nil, err
		}
	}
	return f.Reshape(x, l.split...)
}

// LowerReduceWindow emits a non-overlapping max/min/sum pooling (see
// PoolSupported) as a crop, a reshape and a reduction over the window axes.
func LowerReduceWindow(f compute.Function, x compute.Value, reduction compute.ReduceOpType,
	windowDimensions []int) (compute.Value, error) {
	shape, err := f.Shape(x)
	if err != nil {
		return nil, err
	}
	l := newPoolLayout(shape.Dimensions, windowDimensions)
	split, err := l.cropAndSplit(f, x, shape.Dimensions)
	if err != nil {
		return nil, err
	}
	if len(l.windows) == 0 {
		return split, nil
	}
	switch reduction {
	case compute.ReduceOpMax:
		return f.ReduceMax(split, l.windows...)
	case compute.ReduceOpMin:
		return f.ReduceMin(split, l.windows...)
	case compute.ReduceOpSum:
		return f.ReduceSum(split, l.windows...)
	}
	return nil, fmt.Errorf("golower: pooling reduction %s is not lowered (only Max, Min and Sum)", reduction)
}

// LowerSelectAndScatter emits the gradient of a non-overlapping max (or
// min) pooling: each window's first maximum (minimum; NaN wins, as in the
// Go backend's SelectAndScatter and ArgMinMax) receives the window's value
// of source, every other position zero. The window axes are moved next to
// each other, flattened, and ArgMinMax picks the element; a one-hot
// comparison with an iota spreads source back.
func LowerSelectAndScatter(f compute.Function, operand, source compute.Value, windowDimensions []int,
	isMin bool) (compute.Value, error) {
	shape, err := f.Shape(operand)
	if err != nil {
		return nil, err
	}
	l := newPoolLayout(shape.Dimensions, windowDimensions)
	split, err := l.cropAndSplit(f, operand, shape.Dimensions)
	if err != nil {
		return nil, err
	}
	// grouped: outer axes up to the last windowed one, the window axes, the
	// remaining outer axes; perm maps grouped positions to split positions.
	var perm []int
	for _, p := range l.outer {
		if p <= l.lastOuter {
			perm = append(perm, p)
		}
	}
	windowAt := len(perm)
	perm = append(perm, l.windows...)
	for _, p := range l.outer {
		if p > l.lastOuter {
			perm = append(perm, p)
		}
	}
	grouped, err := f.Transpose(split, perm...)
	if err != nil {
		return nil, err
	}
	windowSize := prod(windowDimensions)
	var flatDims []int // outer dims with one flattened window axis at windowAt
	for _, p := range perm[:windowAt] {
		flatDims = append(flatDims, l.split[p])
	}
	flatDims = append(flatDims, windowSize)
	for _, p := range perm[windowAt+len(l.windows):] {
		flatDims = append(flatDims, l.split[p])
	}
	flat, err := f.Reshape(grouped, flatDims...)
	if err != nil {
		return nil, err
	}
	chosen, err := f.ArgMinMax(flat, windowAt, dtypes.Int32, isMin)
	if err != nil {
		return nil, err
	}
	keptDims := slices.Clone(flatDims)
	keptDims[windowAt] = 1
	if chosen, err = f.Reshape(chosen, keptDims...); err != nil {
		return nil, err
	}
	positions, err := f.Iota(shapes.Make(dtypes.Int32, flatDims...), windowAt)
	if err != nil {
		return nil, err
	}
	mask, err := f.Equal(positions, chosen)
	if err != nil {
		return nil, err
	}
	src, err := f.Reshape(source, keptDims...)
	if err != nil {
		return nil, err
	}
	zero, err := f.Constant(zeroSlice(shape.DType))
	if err != nil {
		return nil, err
	}
	if src, err = f.BroadcastInDim(src, shapes.Make(shape.DType, flatDims...), xrange(len(flatDims))); err != nil {
		return nil, err
	}
	scattered, err := f.Where(mask, src, zero)
	if err != nil {
		return nil, err
	}
	groupedDims := make([]int, len(perm))
	for i, p := range perm {
		groupedDims[i] = l.split[p]
	}
	if scattered, err = f.Reshape(scattered, groupedDims...); err != nil {
		return nil, err
	}
	inverse := make([]int, len(perm))
	for i, p := range perm {
		inverse[p] = i
	}
	if scattered, err = f.Transpose(scattered, inverse...); err != nil {
		return nil, err
	}
	if scattered, err = f.Reshape(scattered, l.cropped...); err != nil {
		return nil, err
	}
	if slices.Equal(l.cropped, shape.Dimensions) {
		return scattered, nil
	}
	pads := make([]compute.PadAxis, shape.Rank())
	for i := range pads {
		pads[i].End = shape.Dimensions[i] - l.cropped[i]
	}
	return f.Pad(scattered, zero, pads...)
}

// xrange returns 0, 1, …, n-1.
func xrange(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
