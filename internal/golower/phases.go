package golower

import (
	"slices"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
)

// Input-dilated convolutions by output phases.
//
// GoMLX's gradient of a strided convolution with respect to its input is a
// convolution of the output gradient dilated by the stride (s−1 zeros
// between values). Lowered as is, its patch matrix and its matmul are
// s^n times larger than needed, nearly all zeros. Split instead by the
// phase r = o mod s of each output position o = s·q + r: with p the low
// padding, position o reads the dilated input at j = o + k − p, which is
// a real value only where j ≡ 0 (mod s), so phase r takes just the kernel
// taps k = k0 + s·t (k0 = (p − r) mod s) and reads the undilated input at
// q + t + m, m = (r + k0 − p)/s. Each phase is thus a convolution with unit
// strides and dilations, a sub-kernel (a strided slice of the kernel) and
// the padding −m below, lowered like any other; the phases' outputs are
// interleaved with one Transpose. A phase without taps is zero.

// phased emits the convolution by phases (see above), or returns ok=false
// when it does not apply: no input dilation above 1, strides or kernel
// dilations other than 1, channel or batch groups.
func (l Lowering) phased(f compute.Function, input, kernel compute.Value, inputShape, kernelShape,
	outputShape shapes.Shape, axes compute.ConvolveAxesConfig, strides []int, paddings [][2]int,
	inputDilations, kernelDilations []int, groups, batchGroups int) (y compute.Value, ok bool, err error) {
	n := len(axes.InputSpatial)
	if n == 0 || groups != 1 || batchGroups != 1 || len(inputDilations) == 0 {
		return nil, false, nil
	}
	strides, kernelDilations = perAxis(strides, n), perAxis(kernelDilations, n)
	dilated := false
	for i := range n {
		if strides[i] != 1 || kernelDilations[i] != 1 {
			return nil, false, nil
		}
		dilated = dilated || inputDilations[i] > 1
	}
	if !dilated {
		return nil, false, nil
	}
	// Per axis and phase: the output count, the first tap, the tap count
	// and the padding of the phase's convolution.
	type phase struct{ count, k0, taps, low, high int }
	phases := make([][]phase, n)
	for i := range n {
		s := inputDilations[i]
		size := inputShape.Dimensions[axes.InputSpatial[i]]
		k := kernelShape.Dimensions[axes.KernelSpatial[i]]
		out := outputShape.Dimensions[axes.OutputSpatial[i]]
		var p int
		if len(paddings) > 0 {
			p = paddings[i][0]
		}
		for r := range s {
			ph := phase{k0: ((p-r)%s + s) % s}
			if r < out {
				ph.count = (out - r + s - 1) / s
			}
			if ph.k0 < k {
				ph.taps = (k - ph.k0 + s - 1) / s
			}
			m := (r + ph.k0 - p) / s // exact: r + k0 − p ≡ 0 (mod s)
			ph.low = -m
			ph.high = ph.count + ph.taps - 1 - size + m
			phases[i] = append(phases[i], ph)
		}
	}
	zero, err := f.Constant(zeroSlice(outputShape.DType))
	if err != nil {
		return nil, false, err
	}
	// Every phase output is padded to phase 0's counts (the largest).
	full := slices.Clone(outputShape.Dimensions)
	for i, axis := range axes.OutputSpatial {
		full[axis] = phases[i][0].count
	}
	numPhases := prod(inputDilations)
	parts := make([]compute.Value, 0, numPhases)
	rs := make([]int, n)
	for range numPhases {
		part, err := l.phase(f, input, kernel, kernelShape, outputShape, axes, zero, full, func(i int) (count, k0,
			taps, low, high int) {
			ph := phases[i][rs[i]]
			return ph.count, ph.k0, ph.taps, ph.low, ph.high
		}, inputDilations)
		if err != nil {
			return nil, false, err
		}
		if part, err = f.Reshape(part, append([]int{1}, full...)...); err != nil {
			return nil, false, err
		}
		parts = append(parts, part)
		for i := n - 1; i >= 0; i-- {
			rs[i]++
			if rs[i] < inputDilations[i] {
				break
			}
			rs[i] = 0
		}
	}
	// [s..., full...] to full with each spatial axis followed by its phase.
	stacked, err := f.Concatenate(0, parts...)
	if err != nil {
		return nil, false, err
	}
	if stacked, err = f.Reshape(stacked, append(slices.Clone(inputDilations), full...)...); err != nil {
		return nil, false, err
	}
	spatialOf := make([]int, len(full))
	for a := range spatialOf {
		spatialOf[a] = -1
	}
	for i, axis := range axes.OutputSpatial {
		spatialOf[axis] = i
	}
	var perm, merged []int
	for a, d := range full {
		perm = append(perm, n+a)
		if i := spatialOf[a]; i >= 0 {
			perm = append(perm, i)
			merged = append(merged, d*inputDilations[i])
		} else {
			merged = append(merged, d)
		}
	}
	if y, err = f.Transpose(stacked, perm...); err != nil {
		return nil, false, err
	}
	if y, err = f.Reshape(y, merged...); err != nil {
		return nil, false, err
	}
	if !slices.Equal(merged, outputShape.Dimensions) {
		if y, err = f.Slice(y, make([]int, len(merged)), outputShape.Dimensions, nil); err != nil {
			return nil, false, err
		}
	}
	return y, true, nil
}

// phase emits one phase's output, padded with zeros to the dimensions
// full: the convolution of input with the phase's sub-kernel, or zeros
// where the phase has no taps or no outputs.
func (l Lowering) phase(f compute.Function, input, kernel compute.Value, kernelShape, outputShape shapes.Shape,
	axes compute.ConvolveAxesConfig, zero compute.Value, full []int,
	axis func(i int) (count, k0, taps, low, high int), inputDilations []int) (compute.Value, error) {
	n := len(axes.InputSpatial)
	rank := n + 2
	starts, limits, sliceStrides := make([]int, rank), slices.Clone(kernelShape.Dimensions), make([]int, rank)
	for a := range sliceStrides {
		sliceStrides[a] = 1
	}
	paddings := make([][2]int, n)
	counts := make([]int, n)
	empty := false
	for i := range n {
		count, k0, taps, low, high := axis(i)
		counts[i] = count
		if count == 0 || taps == 0 {
			empty = true
		}
		ka := axes.KernelSpatial[i]
		starts[ka], limits[ka], sliceStrides[ka] = k0, k0+(taps-1)*inputDilations[i]+1, inputDilations[i]
		paddings[i] = [2]int{low, high}
	}
	if empty {
		return f.BroadcastInDim(zero, shapes.Make(outputShape.DType, full...), nil)
	}
	sub, err := f.Slice(kernel, starts, limits, sliceStrides)
	if err != nil {
		return nil, err
	}
	y, _, err := l.convGeneral(f, nil, input, sub, axes, nil, paddings, nil, nil, 1, 1)
	if err != nil {
		return nil, err
	}
	padAxes := make([]compute.PadAxis, rank)
	needPad := false
	for i, a := range axes.OutputSpatial {
		padAxes[a].End = full[a] - counts[i]
		needPad = needPad || padAxes[a].End > 0
	}
	if !needPad {
		return y, nil
	}
	return f.Pad(y, zero, padAxes...)
}
