package onnxexport

import (
	"slices"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
)

// Gather implements compute.Function for the gathers graph.Gather builds
// (embedding lookups among them): the index vectors, the last axis of
// startIndices, pick the first k axes of the operand, whose other axes are
// taken whole and follow the indices' own axes in the output. One index
// (k = 1) is written as ONNX Gather on axis 0, more as GatherND. GoMLX
// clamps an index outside its axis to the nearest end, where ONNX would
// fail or count from the end, so the indices are clipped first.
func (f *function) Gather(operand, startIndices compute.Value, indexVectorAxis int, offsetOutputAxes, collapsedSliceAxes,
	startIndexMap, sliceSizes []int, indicesAreSorted bool) (compute.Value, error) {
	iv, err := f.inner.Gather(operand, startIndices, indexVectorAxis, offsetOutputAxes, collapsedSliceAxes, startIndexMap,
		sliceSizes, indicesAreSorted)
	if err != nil {
		return nil, err
	}
	os, err := f.inner.Shape(operand)
	if err != nil {
		return nil, err
	}
	is, err := f.inner.Shape(startIndices)
	if err != nil {
		return nil, err
	}
	if err := gatherForm(os, is, indexVectorAxis, offsetOutputAxes, collapsedSliceAxes, startIndexMap, sliceSizes); err != nil {
		return nil, err
	}
	k := len(startIndexMap)
	implicit := indexVectorAxis == is.Rank() // the index vector is an implied axis of size 1
	return f.record(compute.OpTypeGather, iv, nil, func(e *emitter, v *value) string {
		data, idx := e.value(v.inputs[0]), e.value(v.inputs[1])
		dt := v.inputs[1].shape.DType
		if dt != dtypes.Int32 && dt != dtypes.Int64 {
			idx, dt = e.cast(idx, dtypes.Int64), dtypes.Int64
		}
		if k == 1 {
			if !implicit {
				idx = e.node("Squeeze", []string{idx, e.int64Const([]int64{-1})})
			}
			lo, hi := e.scalar(dt, 0), e.scalar(dt, float64(os.Dimensions[0]-1))
			return e.node("Gather", []string{data, e.node("Clip", []string{idx, lo, hi})}, attrInt("axis", 0))
		}
		if dt != dtypes.Int64 {
			idx = e.cast(idx, dtypes.Int64)
		}
		bounds := make([]int64, k)
		for i := range bounds {
			bounds[i] = int64(os.Dimensions[i] - 1)
		}
		idx = e.node("Min", []string{e.node("Max", []string{idx, e.scalar(dtypes.Int64, 0)}), e.int64Const(bounds)})
		return e.node("GatherND", []string{data, idx})
	}, operand, startIndices)
}

// gatherForm checks that a Gather is of graph.Gather's form.
func gatherForm(os, is shapes.Shape, indexVectorAxis int, offsetOutputAxes, collapsedSliceAxes, startIndexMap, sliceSizes []int) error {
	k := len(startIndexMap)
	first := make([]int, k)
	for i := range first {
		first[i] = i
	}
	batch := is.Rank() - 1
	if indexVectorAxis == is.Rank() {
		batch = is.Rank()
	}
	trailing := make([]int, os.Rank()-k)
	for i := range trailing {
		trailing[i] = batch + i
	}
	full := slices.Equal(sliceSizes[:min(k, len(sliceSizes))], slices.Repeat([]int{1}, k)) && len(sliceSizes) == os.Rank() &&
		slices.Equal(sliceSizes[k:], os.Dimensions[k:])
	switch {
	case indexVectorAxis != is.Rank()-1 && !(indexVectorAxis == is.Rank() && k == 1):
		return unsupported(compute.OpTypeGather, "index vectors on axis %d of indices %s (the export writes Gather and GatherND, whose index vectors are the last axis)",
			indexVectorAxis, is)
	case k == 0 || !slices.Equal(startIndexMap, first) || !slices.Equal(collapsedSliceAxes, first):
		return unsupported(compute.OpTypeGather, "start index map %v and collapsed axes %v: the export writes Gather and GatherND, which index the operand's leading axes and drop them",
			startIndexMap, collapsedSliceAxes)
	case !full:
		return unsupported(compute.OpTypeGather, "slice sizes %v of an operand %s: the export writes Gather and GatherND, which take the axes not indexed whole",
			sliceSizes, os)
	case !slices.Equal(offsetOutputAxes, trailing):
		return unsupported(compute.OpTypeGather, "offset output axes %v: the export writes Gather and GatherND, which put the operand's axes after the indices' (%v)",
			offsetOutputAxes, trailing)
	}
	return nil
}
