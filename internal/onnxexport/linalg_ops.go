package onnxexport

import (
	"slices"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
)

// DotGeneral implements compute.Function as ONNX MatMul: one contracting
// axis on each side, and either no batch axes (any number of lhs cross
// axes, one rhs cross axis) or batch axes with one cross axis on each side.
func (f *function) DotGeneral(lhs compute.Value, lhsContractingAxes, lhsBatchAxes []int, rhs compute.Value,
	rhsContractingAxes, rhsBatchAxes []int, config compute.DotGeneralConfig) (compute.Value, error) {
	iv, err := f.inner.DotGeneral(lhs, lhsContractingAxes, lhsBatchAxes, rhs, rhsContractingAxes, rhsBatchAxes, config)
	if err != nil {
		return nil, err
	}
	ls, err := f.inner.Shape(lhs)
	if err != nil {
		return nil, err
	}
	rs, err := f.inner.Shape(rhs)
	if err != nil {
		return nil, err
	}
	lhsCross := crossAxes(ls.Rank(), lhsContractingAxes, lhsBatchAxes)
	rhsCross := crossAxes(rs.Rank(), rhsContractingAxes, rhsBatchAxes)
	switch {
	case len(lhsContractingAxes) != 1 || len(rhsContractingAxes) != 1:
		return nil, unsupported(compute.OpTypeDotGeneral, "%d and %d contracting axes (the export writes MatMul, which contracts one)",
			len(lhsContractingAxes), len(rhsContractingAxes))
	case len(rhsCross) != 1:
		return nil, unsupported(compute.OpTypeDotGeneral, "%d free axes on the right-hand side (the export writes MatMul, which takes one)", len(rhsCross))
	case len(lhsBatchAxes) > 0 && len(lhsCross) != 1:
		return nil, unsupported(compute.OpTypeDotGeneral, "batch axes with %d free left-hand axes (the export writes MatMul, which takes one)", len(lhsCross))
	}
	lhsPerm := slices.Concat(lhsBatchAxes, lhsCross, lhsContractingAxes)
	rhsPerm := slices.Concat(rhsBatchAxes, rhsContractingAxes, rhsCross)
	return f.record(compute.OpTypeDotGeneral, iv, nil, func(e *emitter, v *value) string {
		a := e.transpose(e.value(v.inputs[0]), lhsPerm)
		b := e.transpose(e.value(v.inputs[1]), rhsPerm)
		in := v.inputs[0].shape.DType
		if acc := config.AccumulatorDType; acc != dtypes.InvalidDType && acc != in {
			a, b = e.cast(a, acc), e.cast(b, acc)
			in = acc
		}
		out := e.node("MatMul", []string{a, b})
		if in != v.shape.DType {
			out = e.cast(out, v.shape.DType)
		}
		return out
	}, lhs, rhs)
}

// crossAxes returns the axes of a rank-r operand that are neither
// contracted nor batch, in order.
func crossAxes(rank int, contracting, batch []int) []int {
	var out []int
	for i := range rank {
		if !slices.Contains(contracting, i) && !slices.Contains(batch, i) {
			out = append(out, i)
		}
	}
	return out
}

// ConvGeneral implements compute.Function as ONNX Conv, transposing the
// input and kernel to ONNX's channels-first layouts and the result back.
func (f *function) ConvGeneral(input, kernel compute.Value, axes compute.ConvolveAxesConfig, strides []int, paddings [][2]int,
	inputDilations, kernelDilations []int, channelGroupCount, batchGroupCount int) (compute.Value, error) {
	iv, err := f.inner.ConvGeneral(input, kernel, axes, strides, paddings, inputDilations, kernelDilations, channelGroupCount, batchGroupCount)
	if err != nil {
		return nil, err
	}
	n := len(axes.InputSpatial)
	for _, d := range inputDilations {
		if d > 1 {
			return nil, unsupported(compute.OpTypeConvGeneral, "input dilations %v (a transposed convolution; ONNX Conv has none)", inputDilations)
		}
	}
	if batchGroupCount > 1 {
		return nil, unsupported(compute.OpTypeConvGeneral, "batch group count %d (ONNX Conv has none)", batchGroupCount)
	}
	ks, err := f.inner.Shape(kernel)
	if err != nil {
		return nil, err
	}
	kernelShape := make([]int, n)
	for i, a := range axes.KernelSpatial {
		kernelShape[i] = ks.Dimensions[a]
	}
	// kernel_shape is optional in ONNX (the weights have it); some runtimes
	// (onnx-go's Gorgonia backend) require it.
	attrs := append(convAttrs(n, strides, paddings, kernelDilations), attrInts("kernel_shape", kernelShape))
	if channelGroupCount > 1 {
		attrs = append(attrs, attrInt("group", channelGroupCount))
	}
	inPerm := slices.Concat([]int{axes.InputBatch, axes.InputChannels}, axes.InputSpatial)
	kPerm := slices.Concat([]int{axes.KernelOutputChannels, axes.KernelInputChannels}, axes.KernelSpatial)
	outPerm := inverse(slices.Concat([]int{axes.OutputBatch, axes.OutputChannels}, axes.OutputSpatial))
	return f.record(compute.OpTypeConvGeneral, iv, nil, func(e *emitter, v *value) string {
		x := e.transpose(e.value(v.inputs[0]), inPerm)
		k := e.transpose(e.value(v.inputs[1]), kPerm)
		return e.transpose(e.node("Conv", []string{x, k}, attrs...), outPerm)
	}, input, kernel)
}

// convAttrs are the strides, pads and dilations of n spatial axes.
func convAttrs(n int, strides []int, paddings [][2]int, dilations []int) []*onnxAttr {
	st, dil, pads := ones(n), ones(n), make([]int, 2*n)
	for i := range n {
		if i < len(strides) && strides[i] > 0 {
			st[i] = strides[i]
		}
		if i < len(dilations) && dilations[i] > 0 {
			dil[i] = dilations[i]
		}
		if i < len(paddings) {
			pads[i], pads[n+i] = paddings[i][0], paddings[i][1]
		}
	}
	return []*onnxAttr{attrInts("strides", st), attrInts("pads", pads), attrInts("dilations", dil)}
}

func ones(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// inverse returns the permutation p such that p[q[i]] = i: the transpose
// taking an axis order q back to 0, 1, ….
func inverse(q []int) []int {
	p := make([]int, len(q))
	for i, a := range q {
		p[a] = i
	}
	return p
}

// ReduceWindow implements compute.Function for max pooling (ONNX MaxPool)
// and sum pooling (GoMLX's SumPool, under average pooling: ONNX
// AveragePool counting the padding, times the window's size): the axes
// whose window is 1 with stride 1 and no padding pass through; the first
// two of them are ONNX's batch and channel axes.
func (f *function) ReduceWindow(input compute.Value, reductionType compute.ReduceOpType, windowDimensions, strides, inputDilations,
	windowDilations []int, paddings [][2]int) (compute.Value, error) {
	iv, err := f.inner.ReduceWindow(input, reductionType, windowDimensions, strides, inputDilations, windowDilations, paddings)
	if err != nil {
		return nil, err
	}
	if reductionType != compute.ReduceOpMax && reductionType != compute.ReduceOpSum {
		return nil, unsupported(compute.OpTypeReduceWindow, "a %s reduction (the export writes MaxPool and AveragePool, for max and sum pooling)", reductionType)
	}
	pool := "MaxPool" // the ONNX op the reduction is written as
	if reductionType == compute.ReduceOpSum {
		pool = "AveragePool"
	}
	for _, d := range inputDilations {
		if d > 1 {
			return nil, unsupported(compute.OpTypeReduceWindow, "input dilations %v (ONNX %s has none)", inputDilations, pool)
		}
	}
	rank := len(windowDimensions)
	if len(strides) == 0 {
		strides = windowDimensions
	}
	padAt := func(i int) [2]int {
		if i < len(paddings) {
			return paddings[i]
		}
		return [2]int{}
	}
	dilAt := func(i int) int {
		if i < len(windowDilations) && windowDilations[i] > 0 {
			return windowDilations[i]
		}
		return 1
	}
	var pass, spatial []int
	for i := range rank {
		if windowDimensions[i] == 1 && strides[i] == 1 && padAt(i) == [2]int{} && len(pass) < 2 {
			pass = append(pass, i)
		} else {
			spatial = append(spatial, i)
		}
	}
	if len(pass) < 2 || len(spatial) == 0 {
		return nil, unsupported(compute.OpTypeReduceWindow, "window %v, strides %v: ONNX %s needs two axes the window leaves alone (batch and channels)",
			windowDimensions, strides, pool)
	}
	kernel, st, dil, pads := make([]int, len(spatial)), make([]int, len(spatial)), make([]int, len(spatial)), make([]int, 2*len(spatial))
	for j, a := range spatial {
		kernel[j], st[j], dil[j] = windowDimensions[a], strides[a], dilAt(a)
		pads[j], pads[len(spatial)+j] = padAt(a)[0], padAt(a)[1]
	}
	attrs := []*onnxAttr{attrInts("kernel_shape", kernel), attrInts("strides", st), attrInts("pads", pads)}
	dilated := slices.ContainsFunc(dil, func(d int) bool { return d != 1 })
	if dilated {
		attrs = append(attrs, attrInts("dilations", dil))
	}
	size := 1
	for _, k := range kernel {
		size *= k
	}
	if reductionType == compute.ReduceOpSum {
		if dilated {
			return nil, unsupported(compute.OpTypeReduceWindow, "a sum over dilated windows %v (ONNX AveragePool has no dilations before opset 19)", dil)
		}
		attrs = append(attrs, attrInt("count_include_pad", 1))
	}
	perm := slices.Concat(pass, spatial)
	return f.record(compute.OpTypeReduceWindow, iv, nil, func(e *emitter, v *value) string {
		x := e.transpose(e.value(v.inputs[0]), perm)
		if reductionType == compute.ReduceOpMax {
			return e.transpose(e.node("MaxPool", []string{x}, attrs...), inverse(perm))
		}
		mean := e.node("AveragePool", []string{x}, attrs...)
		return e.transpose(e.node("Mul", []string{mean, e.scalar(v.shape.DType, float64(size))}), inverse(perm))
	}, input)
}

// reduce records a reduction over axes (keepdims=0). ReduceSum takes its
// axes as an input from opset 13 on; the others as an attribute.
func (f *function) reduce(op compute.OpType, onnxOp string, iv compute.Value, err error, x compute.Value, axes []int) (compute.Value, error) {
	axes = append([]int(nil), axes...)
	return f.record(op, iv, err, func(e *emitter, v *value) string {
		in := e.value(v.inputs[0])
		if len(axes) == 0 {
			return e.node("Identity", []string{in})
		}
		if onnxOp == "ReduceSum" {
			return e.node(onnxOp, []string{in, e.int64Const(int64s(axes))}, attrInt("keepdims", 0))
		}
		return e.node(onnxOp, []string{in}, attrInts("axes", axes), attrInt("keepdims", 0))
	}, x)
}

// ReduceMax implements compute.Function.
func (f *function) ReduceMax(x compute.Value, axes ...int) (compute.Value, error) {
	iv, err := f.inner.ReduceMax(x, axes...)
	return f.reduce(compute.OpTypeReduceMax, "ReduceMax", iv, err, x, axes)
}

// ReduceMin implements compute.Function.
func (f *function) ReduceMin(x compute.Value, axes ...int) (compute.Value, error) {
	iv, err := f.inner.ReduceMin(x, axes...)
	return f.reduce(compute.OpTypeReduceMin, "ReduceMin", iv, err, x, axes)
}

// ReduceSum implements compute.Function.
func (f *function) ReduceSum(x compute.Value, axes ...int) (compute.Value, error) {
	iv, err := f.inner.ReduceSum(x, axes...)
	return f.reduce(compute.OpTypeReduceSum, "ReduceSum", iv, err, x, axes)
}

// ReduceProduct implements compute.Function.
func (f *function) ReduceProduct(x compute.Value, axes ...int) (compute.Value, error) {
	iv, err := f.inner.ReduceProduct(x, axes...)
	return f.reduce(compute.OpTypeReduceProduct, "ReduceProd", iv, err, x, axes)
}

// ArgMinMax implements compute.Function as ONNX ArgMax or ArgMin (the
// first index on ties, as GoMLX), cast from int64 to outputDType.
func (f *function) ArgMinMax(x compute.Value, axis int, outputDType dtypes.DType, isMin bool) (compute.Value, error) {
	iv, err := f.inner.ArgMinMax(x, axis, outputDType, isMin)
	onnxOp := "ArgMax"
	if isMin {
		onnxOp = "ArgMin"
	}
	return f.record(compute.OpTypeArgMinMax, iv, err, func(e *emitter, v *value) string {
		out := e.node(onnxOp, []string{e.value(v.inputs[0])}, attrInt("axis", axis), attrInt("keepdims", 0), attrInt("select_last_index", 0))
		if v.shape.DType != dtypes.Int64 {
			out = e.cast(out, v.shape.DType)
		}
		return out
	}, x)
}
