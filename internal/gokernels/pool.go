package gokernels

import (
	"reflect"
	"unsafe"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
)

// reduceWindowParams mirrors the backend's reduceWindowNode.
type reduceWindowParams struct {
	reduction                                                  compute.ReduceOpType
	windowDimensions, strides, inputDilations, windowDilations []int
	paddings                                                   [][2]int
}

// selectAndScatterParams mirrors the backend's selectAndScatterNode.
type selectAndScatterParams struct {
	isMin                     bool
	windowDimensions, strides []int
	paddings                  [][2]int
}

// execReduceWindow runs a float32 max or min pooling whose windows do not
// overlap (strides equal to the window, no padding or dilation) and whose
// trailing unpooled axes make rows of a multiple of 16 values, 16 values
// at a time, as the backend computes each (its running Go max or min from
// the lowest or highest value, over the window's positions in row-major
// order: the same bits, NaNs and signed zeros included).
func execReduceWindow(backend, node unsafe.Pointer, inputs []unsafe.Pointer, _ []bool) (unsafe.Pointer, error) {
	if !enabled.Load() {
		return nil, errFallback
	}
	data := nodeData(node)
	in := float32s(inputs[0])
	if in == nil || reflect.TypeOf(data) != lay.reduceWindowData {
		return nil, errFallback
	}
	p := (*reduceWindowParams)(dataPointer(data))
	if p.reduction != compute.ReduceOpMax && p.reduction != compute.ReduceOpMin {
		return nil, errFallback
	}
	w, ok := poolWindows(bufferShape(inputs[0]).Dimensions, p.windowDimensions, p.strides, p.paddings,
		p.inputDilations, p.windowDilations)
	if !ok || !w.vectorRows() {
		return nil, errFallback
	}
	output, err := getBuffer(backend, nodeShape(node))
	if err != nil {
		return nil, err
	}
	poolRows(w, in, float32s(output)[:w.outSize()], p.reduction == compute.ReduceOpMin)
	ran.Add(1)
	return output, nil
}

// execSelectAndScatter runs the gradient of such a pooling: each window's
// source value is added to zero at the window's first maximum (minimum)
// in row-major order, where a later value takes over when it is greater
// (less) or NaN, as in the backend; the rest of the output is zero.
func execSelectAndScatter(backend, node unsafe.Pointer, inputs []unsafe.Pointer, _ []bool) (unsafe.Pointer, error) {
	if !enabled.Load() {
		return nil, errFallback
	}
	data := nodeData(node)
	in, source := float32s(inputs[0]), float32s(inputs[1])
	if in == nil || source == nil || reflect.TypeOf(data) != lay.selectAndScatterData {
		return nil, errFallback
	}
	p := (*selectAndScatterParams)(dataPointer(data))
	dims := bufferShape(inputs[0]).Dimensions
	w, ok := poolWindows(dims, p.windowDimensions, p.strides, p.paddings, nil, nil)
	if !ok || !w.vectorRows() || len(source) < w.outSize() {
		return nil, errFallback
	}
	output, err := getBuffer(backend, nodeShape(node))
	if err != nil {
		return nil, err
	}
	out := float32s(output)[:len(in)]
	if w.cropped {
		clear(out) // the positions past the last whole window are never written below
	}
	scatterRows(w, in, source, out, p.isMin)
	ran.Add(1)
	return output, nil
}

// windows is a non-overlapping pooling over the leading axes of an
// operand; the trailing axes without a window form contiguous rows.
type windows struct {
	outDims   []int // the pooled dimensions of the leading axes
	inStrides []int // the operand's offset from one window to the next, per leading axis
	offsets   []int // the operand's offsets of a window's positions, row-major
	row       int   // the values in a row of the trailing axes
	cropped   bool  // some positions are past the last whole window
}

// vectorRows reports whether the rows are a multiple of the kernels' 16
// lanes and the machine has them (AVX-512).
func (w windows) vectorRows() bool { return w.row%16 == 0 && hasVectorKernels() }

// poolWindows describes the pooling of an operand of dimensions dims
// whose windows do not overlap, or reports that they do (or are padded
// or dilated).
func poolWindows(dims, window, strides []int, paddings [][2]int, inputDilations, windowDilations []int) (windows, bool) {
	rank := len(dims)
	if rank == 0 || len(window) != rank || len(strides) != 0 && len(strides) != rank {
		return windows{}, false
	}
	for i := range rank {
		s := window[i]
		if len(strides) != 0 {
			s = strides[i]
		}
		if window[i] < 1 || window[i] > dims[i] || s != window[i] ||
			len(paddings) != 0 && paddings[i] != [2]int{} ||
			len(inputDilations) != 0 && inputDilations[i] != 1 ||
			len(windowDilations) != 0 && windowDilations[i] != 1 {
			return windows{}, false
		}
	}
	lead := rank // the leading axes end at the last windowed one
	for lead > 0 && window[lead-1] == 1 {
		lead--
	}
	w := windows{row: inSize(dims[lead:]), offsets: []int{0}}
	for i := range lead {
		axisStride := inSize(dims[i+1:])
		w.outDims = append(w.outDims, dims[i]/window[i])
		w.cropped = w.cropped || dims[i]%window[i] != 0
		w.inStrides = append(w.inStrides, window[i]*axisStride)
		var grown []int
		for _, off := range w.offsets {
			for k := range window[i] {
				grown = append(grown, off+k*axisStride)
			}
		}
		w.offsets = grown
	}
	return w, true
}

// outSize is the number of values of the pooled output.
func (w windows) outSize() int { return inSize(w.outDims) * w.row }

// each calls visit with the operand offset of every window's origin and
// the output offset of its row, in row-major order.
func (w windows) each(visit func(origin, at int)) {
	if len(w.outDims) == 0 {
		visit(0, 0)
		return
	}
	last := len(w.outDims) - 1
	index := make([]int, last)
	at := 0
	for {
		origin := 0
		for i, n := range index {
			origin += n * w.inStrides[i]
		}
		for range w.outDims[last] {
			visit(origin, at)
			origin += w.inStrides[last]
			at += w.row
		}
		i := last - 1
		for ; i >= 0; i-- {
			index[i]++
			if index[i] < w.outDims[i] {
				break
			}
			index[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// RunsPooling reports whether the kernels here run a max or min pooling
// (ReduceWindow) of a float32 operand of dimensions dims, and its
// gradient (SelectAndScatter), with these parameters: they are installed
// and on (SetEnabled) as the graph is built, the windows do not overlap,
// and the trailing unpooled axes make rows of a multiple of 16 values
// (channels-last images of 16, 32, 64… channels). A graph built so needs
// them on when it runs to be fast (the backend's own pooling is a
// per-element loop).
func RunsPooling(dtype dtypes.DType, dims, window, strides []int, paddings [][2]int, inputDilations, windowDilations []int) bool {
	if installErr != nil || !enabled.Load() || dtype != dtypes.Float32 {
		return false
	}
	w, ok := poolWindows(dims, window, strides, paddings, inputDilations, windowDilations)
	return ok && w.vectorRows()
}
