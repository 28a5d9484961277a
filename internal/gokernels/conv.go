package gokernels

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapeinference"
	"github.com/gomlx/compute/shapes"

	"github.com/voltml/volt/internal/onednn"
)

// convParams mirrors the backend's convNode.
type convParams struct {
	axes                                             compute.ConvolveAxesConfig
	strides                                          []int
	paddings                                         [][2]int
	inputDilations, kernelDilations                  []int
	channelGroupCount, batchGroupCount               int
	hasInputDilations, hasKernelDilations            bool
	inputStrides, inputSpatialStrides, kernelStrides []int
	dilatedInputSpatialDims                          []int
}

// convDirection is the oneDNN computation a ConvGeneral maps onto.
type convDirection int

const (
	convForward         convDirection = iota // the convolution itself
	convBackwardWeights                      // the same sum, read as a kernel gradient
	convBackwardData                         // an input-dilated convolution, read as an input gradient
)

// convPlan is a float32 2-D ConvGeneral as a oneDNN call.
type convPlan struct {
	dir  convDirection
	conv onednn.Conv
	// kernelStrides and kernelDims are the kernel's [O, I, KH, KW]
	// strides and dimensions, to read it with both spatial axes reversed
	// (BackwardData).
	kernelStrides, kernelDims [4]int
	// outDims is a BackwardData output's [N, C, H, W], of which oneDNN
	// writes the first conv.Height rows and conv.Width columns.
	outDims [4]int
}

// planConv maps a float32 ConvGeneral with two spatial axes onto oneDNN:
//
//   - without input dilation, out[b,f,s] = Σ_{c,k} in[b,c,s·stride+k·kdil−pad]·kernel[c,f,k]
//     is oneDNN's forward convolution, or, when the kernel's spatial
//     extent is larger than the output's, its kernel gradient with the
//     roles swapped (batch b ↔ channels c, kernel ↔ output positions,
//     strides ↔ kernel dilations): GoMLX's gradient of a convolution with
//     respect to its kernel is such a ConvGeneral;
//   - with input dilation and unit strides (GoMLX's input gradient of a
//     strided convolution), out[b,f,i] = Σ_{c,k} dilated(in)[b,c,i+k·kdil−pad]·kernel[c,f,k]
//     is oneDNN's input gradient of the convolution with stride = the
//     input dilation, padding = (K−1)·kdil − pad and the kernel reversed.
//
// A negative high padding (a crop) leaves the input's last rows out, and
// an input gradient's last rows that no output reaches are zeroed, unless
// those rows are the ones the last stride skips anyway (cropHigh). It
// reports false for anything else (other ranks, channel or batch groups,
// negative low padding, sizes that do not fit those readings).
func planConv(in, kernel, out []int, p *convParams) (convPlan, bool) {
	a := p.axes
	if len(in) != 4 || len(kernel) != 4 || len(out) != 4 || len(a.InputSpatial) != 2 || len(a.KernelSpatial) != 2 ||
		len(a.OutputSpatial) != 2 || max(p.channelGroupCount, 1) != 1 || max(p.batchGroupCount, 1) != 1 {
		return convPlan{}, false
	}
	ones := []int{1, 1}
	strides, inDil, kDil := orOnes(p.strides, ones), orOnes(p.inputDilations, ones), orOnes(p.kernelDilations, ones)
	paddings := p.paddings
	if len(paddings) == 0 {
		paddings = make([][2]int, 2)
	}
	if len(strides) != 2 || len(inDil) != 2 || len(kDil) != 2 || len(paddings) != 2 {
		return convPlan{}, false
	}
	for i := range 2 { // a negative high padding (a crop) is read as fewer rows below
		if paddings[i][0] < 0 {
			return convPlan{}, false
		}
	}
	rowMajor := [4]int{0, 1, 2, 3}
	inS, kS, outS := onednn.Dense([4]int(in), rowMajor), onednn.Dense([4]int(kernel), rowMajor), onednn.Dense([4]int(out), rowMajor)
	at := func(strides [4]int, axes ...int) [4]int {
		return [4]int{strides[axes[0]], strides[axes[1]], strides[axes[2]], strides[axes[3]]}
	}
	inSp := [2]int{in[a.InputSpatial[0]], in[a.InputSpatial[1]]}
	kSp := [2]int{kernel[a.KernelSpatial[0]], kernel[a.KernelSpatial[1]]}
	outSp := [2]int{out[a.OutputSpatial[0]], out[a.OutputSpatial[1]]}
	c := onednn.Conv{Groups: 1, BatchChunk: convBatchChunk}
	var plan convPlan

	switch {
	case inDil[0] == 1 && inDil[1] == 1 && kSp[0]*kSp[1] <= outSp[0]*outSp[1]:
		plan.dir = convForward
		c.Batch, c.InChannels = in[a.InputBatch], in[a.InputChannels]
		c.OutChannels, c.KernelHeight, c.KernelWidth = kernel[a.KernelOutputChannels], kSp[0], kSp[1]
		c.Strides, c.Dilations = [2]int{strides[0], strides[1]}, [2]int{kDil[0], kDil[1]}
		c.PadLow, c.PadHigh = [2]int{paddings[0][0], paddings[1][0]}, [2]int{paddings[0][1], paddings[1][1]}
		cropHigh(&c, inSp) // the input rows a negative high padding crops are left out
		c.SrcStrides = at(inS, a.InputBatch, a.InputChannels, a.InputSpatial[0], a.InputSpatial[1])
		c.WeightsStrides = at(kS, a.KernelOutputChannels, a.KernelInputChannels, a.KernelSpatial[0], a.KernelSpatial[1])
		c.DstStrides = at(outS, a.OutputBatch, a.OutputChannels, a.OutputSpatial[0], a.OutputSpatial[1])

	case inDil[0] == 1 && inDil[1] == 1:
		plan.dir = convBackwardWeights
		c.Batch, c.InChannels = in[a.InputChannels], in[a.InputBatch]
		c.OutChannels, c.KernelHeight, c.KernelWidth = kernel[a.KernelOutputChannels], outSp[0], outSp[1]
		c.Strides, c.Dilations = [2]int{kDil[0], kDil[1]}, [2]int{strides[0], strides[1]}
		c.PadLow = [2]int{paddings[0][0], paddings[1][0]}
		for i := range 2 { // the high padding that makes oneDNN's output the kernel's extent
			c.PadHigh[i] = (kSp[i]-1)*kDil[i] + (outSp[i]-1)*strides[i] + 1 - inSp[i] - c.PadLow[i]
			if c.PadHigh[i] > paddings[i][1] {
				return convPlan{}, false
			}
		}
		cropHigh(&c, inSp) // the input rows past the last one read are left out
		c.SrcStrides = at(inS, a.InputChannels, a.InputBatch, a.InputSpatial[0], a.InputSpatial[1])
		c.DstStrides = at(kS, a.KernelInputChannels, a.KernelOutputChannels, a.KernelSpatial[0], a.KernelSpatial[1])
		c.WeightsStrides = at(outS, a.OutputChannels, a.OutputBatch, a.OutputSpatial[0], a.OutputSpatial[1])

	case strides[0] == 1 && strides[1] == 1:
		plan.dir = convBackwardData
		c.Batch, c.InChannels = in[a.InputBatch], kernel[a.KernelOutputChannels]
		c.OutChannels, c.KernelHeight, c.KernelWidth = in[a.InputChannels], kSp[0], kSp[1]
		c.Strides, c.Dilations = [2]int{inDil[0], inDil[1]}, [2]int{kDil[0], kDil[1]}
		for i := range 2 {
			c.PadLow[i] = (kSp[i]-1)*kDil[i] - paddings[i][0]
			c.PadHigh[i] = (inSp[i]-1)*inDil[i] + (kSp[i]-1)*kDil[i] + 1 - outSp[i] - c.PadLow[i]
			if c.PadLow[i] < 0 {
				return convPlan{}, false
			}
		}
		// Output rows past the last one an input reaches get no gradient:
		// oneDNN writes the others, run zeroes them.
		cropHigh(&c, outSp)
		plan.outDims = [4]int{out[a.OutputBatch], out[a.OutputChannels], outSp[0], outSp[1]}
		c.DstStrides = at(inS, a.InputBatch, a.InputChannels, a.InputSpatial[0], a.InputSpatial[1])
		c.SrcStrides = at(outS, a.OutputBatch, a.OutputChannels, a.OutputSpatial[0], a.OutputSpatial[1])
		plan.kernelStrides = at(kS, a.KernelInputChannels, a.KernelOutputChannels, a.KernelSpatial[0], a.KernelSpatial[1])
		plan.kernelDims = [4]int{kernel[a.KernelInputChannels], kernel[a.KernelOutputChannels], kSp[0], kSp[1]}
		c.WeightsStrides = onednn.Dense(plan.kernelDims, rowMajor)

	default:
		return convPlan{}, false
	}
	plan.conv = c
	return plan, true
}

// cropHigh sets c's spatial size to size less the rows and columns a
// negative high padding leaves out, and that padding to zero: oneDNN
// takes no negative padding, and rows nothing reads (or, for an input
// gradient, nothing reaches) need not be described. Where the rows left
// out are those the last stride would skip anyway (a strided
// convolution over an even size), the full size is kept: the output is
// the same, and oneDNN's fast kernels want dense activations (on a
// cropped, strided view it runs its reference ones).
func cropHigh(c *onednn.Conv, size [2]int) {
	cropped := *c
	cropped.Height, cropped.Width = size[0]+min(c.PadHigh[0], 0), size[1]+min(c.PadHigh[1], 0)
	cropped.PadHigh = [2]int{max(c.PadHigh[0], 0), max(c.PadHigh[1], 0)}
	full := cropped
	full.Height, full.Width = size[0], size[1]
	oh, ow := cropped.OutputSize()
	if fh, fw := full.OutputSize(); fh == oh && fw == ow {
		*c = full
		return
	}
	*c = cropped
}

// orOnes returns s, or ones when s is empty.
func orOnes(s, ones []int) []int {
	if len(s) == 0 {
		return ones
	}
	return s
}

// run computes the plan's convolution from the ConvGeneral's input and
// kernel into out.
func (p convPlan) run(in, kernel, out []float32) error {
	switch p.dir {
	case convForward:
		return onednn.Forward(p.conv, in, kernel, out)
	case convBackwardWeights:
		return onednn.BackwardWeights(p.conv, in, kernel, out)
	}
	// The kernel, reversed along both spatial axes, dense [O, I, KH, KW].
	d, s := p.kernelDims, p.kernelStrides
	buf := reversedKernels.Get().(*[]float32)
	defer reversedKernels.Put(buf)
	if n := d[0] * d[1] * d[2] * d[3]; cap(*buf) < n {
		*buf = make([]float32, n)
	}
	weights := (*buf)[:d[0]*d[1]*d[2]*d[3]]
	i := 0
	for o := range d[0] {
		for c := range d[1] {
			for h := range d[2] {
				for w := range d[3] {
					weights[i] = kernel[o*s[0]+c*s[1]+(d[2]-1-h)*s[2]+(d[3]-1-w)*s[3]]
					i++
				}
			}
		}
	}
	if err := onednn.BackwardData(p.conv, in, weights, out); err != nil {
		return err
	}
	d, st := p.outDims, p.conv.SrcStrides
	if d[2] == p.conv.Height && d[3] == p.conv.Width {
		return nil
	}
	for n := range d[0] {
		for c := range d[1] {
			base := n*st[0] + c*st[1]
			for h := range d[2] {
				from := p.conv.Width // the columns past the last reached
				if h >= p.conv.Height {
					from = 0 // the rows past the last reached
				}
				for w := from; w < d[3]; w++ {
					out[base+h*st[2]+w*st[3]] = 0
				}
			}
		}
	}
	return nil
}

// reversedKernels holds the buffers convPlan.run reverses kernels into,
// so that an input gradient allocates none per step.
var reversedKernels = sync.Pool{New: func() any { return new([]float32) }}

// execConvGeneral runs a float32 ConvGeneral that planConv maps onto
// oneDNN.
func execConvGeneral(backend, node unsafe.Pointer, inputs []unsafe.Pointer, _ []bool) (unsafe.Pointer, error) {
	if !enabled.Load() || onednn.Available() != nil {
		return nil, errFallback
	}
	data := nodeData(node)
	in, kernel := float32s(inputs[0]), float32s(inputs[1])
	if in == nil || kernel == nil || reflect.TypeOf(data) != lay.convData {
		return nil, errFallback
	}
	shape := nodeShape(node)
	plan, ok := planConv(bufferShape(inputs[0]).Dimensions, bufferShape(inputs[1]).Dimensions, shape.Dimensions,
		(*convParams)(dataPointer(data)))
	if !ok {
		return nil, errFallback
	}
	output, err := getBuffer(backend, shape)
	if err != nil {
		return nil, err
	}
	if err := plan.run(in, kernel, float32s(output)); err != nil {
		return nil, errFallback
	}
	ran.Add(1)
	return output, nil
}

// RunsConv reports whether a ConvGeneral with these arguments runs on
// oneDNN here: the kernels are installed and on, oneDNN is available
// (internal/onednn), and the convolution is one planConv maps, whose
// oneDNN primitive could be created (it is, now, so that its one-time
// cost falls on building the graph, not on its first step).
func RunsConv(input, kernel shapes.Shape, axes compute.ConvolveAxesConfig, strides []int, paddings [][2]int,
	inputDilations, kernelDilations []int, channelGroupCount, batchGroupCount int) bool {
	if installErr != nil || !enabled.Load() || input.DType != dtypes.Float32 || kernel.DType != dtypes.Float32 {
		return false
	}
	out, err := shapeinference.ConvGeneral(input, kernel, axes, strides, paddings, inputDilations, kernelDilations,
		channelGroupCount, batchGroupCount)
	if err != nil {
		return false
	}
	plan, ok := planConv(input.Dimensions, kernel.Dimensions, out.Dimensions, &convParams{axes: axes, strides: strides,
		paddings: paddings, inputDilations: inputDilations, kernelDilations: kernelDilations,
		channelGroupCount: channelGroupCount, batchGroupCount: batchGroupCount})
	if !ok {
		return false
	}
	if err := onednn.Available(); err != nil {
		if !onednn.Disabled() {
			convsWithoutOneDNN.Add(1)
		}
		return false
	}
	// The primitive a full chunk runs on (onednn.Conv.BatchChunk).
	chunk := plan.conv
	chunk.Batch, chunk.Threads, chunk.BatchChunk = min(chunk.Batch, convBatchChunk), 1, 0
	_, err = onednn.Impl(chunk, [...]string{"Forward", "BackwardWeights", "BackwardData"}[plan.dir])
	return err == nil
}

// convBatchChunk is the number of examples each partial sum of a kernel
// gradient on oneDNN covers (onednn.Conv.BatchChunk): fixed, so that the
// bits do not depend on the cores.
const convBatchChunk = 32
