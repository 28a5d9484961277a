package onnxexport

import (
	"math"
	"slices"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
)

// Reshape implements compute.Function.
func (f *function) Reshape(x compute.Value, dimensions ...int) (compute.Value, error) {
	iv, err := f.inner.Reshape(x, dimensions...)
	res, err := f.record(compute.OpTypeReshape, iv, err, func(e *emitter, v *value) string {
		from, to := v.inputs[0].shape.Dimensions, v.shape.Dimensions
		twinFrom, twinTo := from, to
		if v.twin != nil {
			twinFrom, twinTo = v.twin.inputs[0].shape.Dimensions, v.twin.shape.Dimensions
		}
		return e.reshapeTo(e.value(v.inputs[0]), from, to, twinFrom, twinTo)
	}, x)
	if err != nil {
		return nil, err
	}
	// A Reshape that only adds (or drops) leading 1s is, to an elementwise
	// op, its operand: ONNX broadcasting implies them.
	v := f.trace.values[iv]
	if op := v.inputs[0]; slices.Equal(trimOnes(v.shape.Dimensions), trimOnes(op.shape.Dimensions)) {
		v.compact, v.zero = trimOnes(v.shape.Dimensions), op.zero
	}
	return res, nil
}

// Transpose implements compute.Function.
func (f *function) Transpose(x compute.Value, permutation ...int) (compute.Value, error) {
	iv, err := f.inner.Transpose(x, permutation...)
	perm := append([]int(nil), permutation...)
	return f.record(compute.OpTypeTranspose, iv, err, func(e *emitter, v *value) string {
		return e.transpose(e.value(v.inputs[0]), perm)
	}, x)
}

// BroadcastInDim implements compute.Function: an elementwise op consuming
// it takes its compact form (ONNX broadcasts it); anything else gets it
// expanded (Expand, whose target shape reads the batch size from the
// batch input where it follows it).
func (f *function) BroadcastInDim(operand compute.Value, outputShape shapes.Shape, broadcastAxes []int) (compute.Value, error) {
	iv, err := f.inner.BroadcastInDim(operand, outputShape, broadcastAxes)
	res, err := f.record(compute.OpTypeBroadcastInDim, iv, err, func(e *emitter, v *value) string {
		name, _ := e.compactOf(v)
		twin := v.shape.Dimensions
		if v.twin != nil {
			twin = v.twin.shape.Dimensions
		}
		return e.node("Expand", []string{name, e.shape(v.shape.Dimensions, twin)})
	}, operand)
	if err != nil {
		return nil, err
	}
	v := f.trace.values[iv]
	op := v.inputs[0]
	compact := make([]int, v.shape.Rank())
	for i := range compact {
		compact[i] = 1
	}
	for i, axis := range broadcastAxes {
		compact[axis] = op.shape.Dimensions[i]
	}
	// A bias [C] broadcast to [B, C] stays [C] and needs no Reshape.
	v.compact, v.zero = trimOnes(compact), op.zero
	return res, nil
}

// ConvertDType implements compute.Function (ONNX Cast).
func (f *function) ConvertDType(x compute.Value, dtype dtypes.DType) (compute.Value, error) {
	iv, err := f.inner.ConvertDType(x, dtype)
	return f.record(compute.OpTypeConvertDType, iv, err, func(e *emitter, v *value) string {
		return e.cast(e.value(v.inputs[0]), v.shape.DType)
	}, x)
}

// cast emits a Cast of x to dt.
func (e *emitter) cast(x string, dt dtypes.DType) string {
	to, _ := onnxType(dt)
	return e.node("Cast", []string{x}, attrInt("to", int(to)))
}

// Slice implements compute.Function.
func (f *function) Slice(x compute.Value, starts, limits, strides []int) (compute.Value, error) {
	iv, err := f.inner.Slice(x, starts, limits, strides)
	st, lim := append([]int(nil), starts...), append([]int(nil), limits...)
	steps := make([]int, len(starts))
	for i := range steps {
		steps[i] = 1
		if i < len(strides) && strides[i] > 0 {
			steps[i] = strides[i]
		}
	}
	return f.record(compute.OpTypeSlice, iv, err, func(e *emitter, v *value) string {
		// Only the axes sliced are written: an axis taken whole (the
		// batch's, often) keeps its size out of the model.
		var axes, from, to, by []int
		for i, d := range v.inputs[0].shape.Dimensions {
			if st[i] != 0 || lim[i] != d || steps[i] != 1 {
				axes, from, to, by = append(axes, i), append(from, st[i]), append(to, lim[i]), append(by, steps[i])
			}
		}
		if len(axes) == 0 {
			return e.value(v.inputs[0])
		}
		return e.node("Slice", []string{e.value(v.inputs[0]), e.int64Const(int64s(from)), e.int64Const(int64s(to)),
			e.int64Const(int64s(axes)), e.int64Const(int64s(by))})
	}, x)
}

// Concatenate implements compute.Function.
func (f *function) Concatenate(axis int, operands ...compute.Value) (compute.Value, error) {
	iv, err := f.inner.Concatenate(axis, operands...)
	return f.record(compute.OpTypeConcatenate, iv, err, func(e *emitter, v *value) string {
		names := make([]string, len(v.inputs))
		for i, in := range v.inputs {
			names[i] = e.value(in)
		}
		return e.node("Concat", names, attrInt("axis", axis))
	}, operands...)
}

// Clamp implements compute.Function: Min(Max(x, lo), hi).
func (f *function) Clamp(lo, x, hi compute.Value) (compute.Value, error) {
	iv, err := f.inner.Clamp(lo, x, hi)
	return f.record(compute.OpTypeClamp, iv, err, func(e *emitter, v *value) string {
		lower := e.node("Max", e.broadcastOperands(v.shape.Dimensions, []*value{v.inputs[1], v.inputs[0]}))
		hiName, _ := e.compactOf(v.inputs[2])
		return e.node("Min", []string{lower, hiName})
	}, lo, x, hi)
}

// Iota implements compute.Function: written as a constant.
func (f *function) Iota(shape shapes.Shape, iotaAxis int) (compute.Value, error) {
	iv, err := f.inner.Iota(shape, iotaAxis)
	if err != nil {
		return nil, err
	}
	n := shape.Size()
	dims := shape.Dimensions
	stride := 1
	for _, d := range dims[iotaAxis+1:] {
		stride *= d
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = float64((i / stride) % dims[iotaAxis])
	}
	raw, err := encode(shape.DType, vals)
	if err != nil {
		return nil, unsupported(compute.OpTypeIota, "%v", err)
	}
	v := &value{op: compute.OpTypeIota, shape: shape, param: -1, constant: raw}
	v.lower = func(e *emitter, v *value) string { return e.initializer(v.shape.DType, v.shape.Dimensions, v.constant) }
	f.trace.add(iv, v)
	return iv, nil
}

// modNode is ONNX Mod with C's fmod semantics.
func modNode(out string, inputs []string) *onnx.NodeProto {
	return &onnx.NodeProto{OpType: "Mod", Name: out, Input: inputs, Output: []string{out}, Attribute: []*onnx.AttributeProto{attrInt("fmod", 1)}}
}

// Pad implements compute.Function: ONNX Pad (constant mode) with the fill
// value as its constant_value. Negative paddings (crops) are written as a
// Slice before it, since ONNX runtimes differ on Pad's negative pads;
// interior padding has no ONNX op and is refused.
func (f *function) Pad(x, fillValue compute.Value, axesConfig ...compute.PadAxis) (compute.Value, error) {
	for i, a := range axesConfig {
		if a.Interior != 0 {
			return nil, unsupported(compute.OpTypePad, "interior padding %d on axis %d (ONNX Pad pads only before and after an axis)", a.Interior, i)
		}
	}
	iv, err := f.inner.Pad(x, fillValue, axesConfig...)
	axes := slices.Clone(axesConfig)
	return f.record(compute.OpTypePad, iv, err, func(e *emitter, v *value) string {
		dims := v.inputs[0].shape.Dimensions
		name := e.value(v.inputs[0])
		var cropAxes, from, to []int
		pads := make([]int, 2*len(dims)) // ONNX's order: every axis's start, then every axis's end
		for i, d := range dims {
			var a compute.PadAxis
			if i < len(axes) {
				a = axes[i]
			}
			lo, hi := max(-a.Start, 0), d-max(-a.End, 0)
			if lo != 0 || hi != d {
				cropAxes, from, to = append(cropAxes, i), append(from, lo), append(to, hi)
			}
			pads[i], pads[len(dims)+i] = max(a.Start, 0), max(a.End, 0)
		}
		if len(cropAxes) > 0 {
			name = e.node("Slice", []string{name, e.int64Const(int64s(from)), e.int64Const(int64s(to)), e.int64Const(int64s(cropAxes))})
		}
		if !slices.ContainsFunc(pads, func(p int) bool { return p != 0 }) {
			return name
		}
		return e.node("Pad", []string{name, e.int64Const(int64s(pads)), e.value(v.inputs[1])})
	}, x, fillValue)
}

// Reverse implements compute.Function: an ONNX Slice of every reversed
// axis from its last element down, by steps of -1.
func (f *function) Reverse(x compute.Value, axes ...int) (compute.Value, error) {
	iv, err := f.inner.Reverse(x, axes...)
	reversed := slices.Clone(axes)
	return f.record(compute.OpTypeReverse, iv, err, func(e *emitter, v *value) string {
		if len(reversed) == 0 {
			return e.value(v.inputs[0])
		}
		starts, ends, steps := make([]int64, len(reversed)), make([]int64, len(reversed)), make([]int64, len(reversed))
		for i := range reversed {
			// From the last element to past the first: ONNX clamps the
			// end to -1 when the step is negative.
			starts[i], ends[i], steps[i] = -1, math.MinInt64, -1
		}
		return e.node("Slice", []string{e.value(v.inputs[0]), e.int64Const(starts), e.int64Const(ends), e.int64Const(int64s(reversed)), e.int64Const(steps)})
	}, x)
}
