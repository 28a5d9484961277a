package onednn

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// Conv describes one float32 2-D convolution and the memory layout of its
// three tensors. Each tensor is described by its logical axes and, per
// axis, its stride in elements within the caller's slice, so that NCHW,
// NHWC or any axes order (GoMLX's included) is read and written in place:
//
//   - the input (src, and diff_src for BackwardData): axes (N, C, H, W);
//   - the kernel (weights, and diff_weights for BackwardWeights): axes
//     (O, C/Groups, KH, KW); output channel o belongs to group
//     o/(O/Groups) and reads input channels of that group;
//   - the output (dst, and diff_dst): axes (N, O, OH, OW), with OH and
//     OW given by OutputSize.
//
// A zero stride array means dense row-major in the axes order above
// (NCHW, OIHW, NCHW). Zero Groups, Strides or Dilations mean 1.
type Conv struct {
	Batch, InChannels, Height, Width       int
	OutChannels, KernelHeight, KernelWidth int
	Groups                                 int
	Strides                                [2]int // (H, W)
	PadLow, PadHigh                        [2]int // (H, W), in input pixels
	Dilations                              [2]int // (H, W); 1: none

	SrcStrides, WeightsStrides, DstStrides [4]int

	// Threads is the OpenMP thread count oneDNN runs this convolution
	// with; zero means runtime.GOMAXPROCS(0).
	Threads int

	// BatchChunk, when positive, runs the convolution in chunks of
	// BatchChunk examples (the last may be smaller), each by a one-thread
	// primitive, up to Threads of them at once; BackwardWeights adds the
	// chunks' gradients pairwise in a fixed order. The bits then do not
	// depend on Threads: oneDNN's own threading changes them (its
	// reduction over the batch in BackwardWeights, and, on some of
	// parity's ResNet shapes, the forward or input gradient too).
	// BackwardWeights' rounding error is then that of a BatchChunk-example
	// sum: oneDNN reduces the whole batch in one running float32 sum, 6×
	// golower's error on examples/resnet's 16-channel kernel gradient
	// (3.1e-6 against 4.9e-7 of the largest value, next to a float64
	// reference; 1.5e-6 in chunks of 8).
	BatchChunk int

	// Format picks how oneDNN reads the tensors: FormatDefault (the
	// measured fastest for volt's networks), FormatPlain, FormatBlocked
	// or FormatWeightsBlocked.
	Format Format
}

// Format is the memory format oneDNN's convolution kernels use.
type Format int

const (
	// FormatDefault is the format measured faster end to end, reorders
	// included, on examples/resnet's and examples/cnn's convolutions:
	// FormatWeightsBlocked where the activations are dense channels-last
	// (NHWC, as GoMLX lays them out), else FormatBlocked (on strided or
	// cropped activations oneDNN 2.6 falls back to its reference kernels,
	// 20-50× slower). On plain strided tensors oneDNN 2.6 runs im2col +
	// GEMM (x64:gemm:jit): the ResNet's convolutions took 0.38× as long
	// blocked as plain at 1 thread, 0.34× at 2, on a 2-core AMD EPYC with
	// AVX-512 (BenchmarkResNetConvsVsGolower). With the weights blocked,
	// oneDNN runs its direct AVX-512 kernels on channels-last activations
	// as they are (brgconv / jit:avx512_core), which spares the
	// activations' reorders (~40% of oneDNN's time in the ResNet's step):
	// the ResNet's convolutions in a row took 23.7 ms weights-blocked
	// against 27.1 ms blocked at 1 thread, 15.4 against 20.2 at 2
	// (BenchmarkResNetConvsVsGolower, same machine).
	FormatDefault Format = iota
	// FormatPlain runs the convolution directly on the caller's strided
	// tensors.
	FormatPlain
	// FormatBlocked lets oneDNN pick its preferred (blocked) formats and
	// reorders the tensors into and out of them on every call.
	FormatBlocked
	// FormatWeightsBlocked reads and writes the activations in the
	// caller's layout and lets oneDNN pick the weights' format.
	FormatWeightsBlocked
)

// String names the format.
func (f Format) String() string {
	switch f {
	case FormatDefault:
		return "default"
	case FormatPlain:
		return "plain"
	case FormatBlocked:
		return "blocked"
	case FormatWeightsBlocked:
		return "weights-blocked"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// OutputSize returns the convolution's output height and width.
func (c Conv) OutputSize() (oh, ow int) {
	c = c.withDefaults()
	return outSize(c.Height, c.KernelHeight, c.Strides[0], c.PadLow[0], c.PadHigh[0], c.Dilations[0]),
		outSize(c.Width, c.KernelWidth, c.Strides[1], c.PadLow[1], c.PadHigh[1], c.Dilations[1])
}

func outSize(in, kernel, stride, low, high, dilation int) int {
	span := (kernel-1)*dilation + 1
	return (in+low+high-span)/stride + 1
}

// Dense returns the strides of a dense tensor of the given logical
// dimensions whose axes are stored in the given order, outermost first:
// Dense(d, [4]int{0, 1, 2, 3}) is row-major; for an input, order
// {0, 2, 3, 1} is NHWC; for a kernel, {2, 3, 1, 0} is GoMLX's HWIO.
func Dense(dimensions [4]int, order [4]int) [4]int {
	var strides [4]int
	step := 1
	for i := 3; i >= 0; i-- {
		strides[order[i]] = step
		step *= dimensions[order[i]]
	}
	return strides
}

// withDefaults fills the zero Groups, Strides and Dilations.
func (c Conv) withDefaults() Conv {
	if c.Groups == 0 {
		c.Groups = 1
	}
	for i := range 2 {
		if c.Strides[i] == 0 {
			c.Strides[i] = 1
		}
		if c.Dilations[i] == 0 {
			c.Dilations[i] = 1
		}
	}
	return c
}

// normalized fills every zero default: those of withDefaults, Threads,
// the dense strides and Format.
func (c Conv) normalized() Conv {
	c = c.withDefaults()
	if c.Threads == 0 {
		c.Threads = runtime.GOMAXPROCS(0)
	}
	row := [4]int{0, 1, 2, 3}
	if c.SrcStrides == [4]int{} {
		c.SrcStrides = Dense(c.srcDims(), row)
	}
	if c.WeightsStrides == [4]int{} {
		c.WeightsStrides = Dense(c.weightsDims(), row)
	}
	if c.DstStrides == [4]int{} {
		c.DstStrides = Dense(c.dstDims(), row)
	}
	if c.Format == FormatDefault {
		c.Format = FormatBlocked
		channelsLast := [4]int{0, 2, 3, 1}
		if c.Groups == 1 && c.SrcStrides == Dense(c.srcDims(), channelsLast) && c.DstStrides == Dense(c.dstDims(), channelsLast) {
			c.Format = FormatWeightsBlocked
		}
	}
	return c
}

func (c Conv) srcDims() [4]int { return [4]int{c.Batch, c.InChannels, c.Height, c.Width} }

func (c Conv) weightsDims() [4]int {
	groups := max(c.Groups, 1)
	return [4]int{c.OutChannels, c.InChannels / groups, c.KernelHeight, c.KernelWidth}
}

func (c Conv) dstDims() [4]int {
	oh, ow := c.OutputSize()
	return [4]int{c.Batch, c.OutChannels, oh, ow}
}

// SrcLen, WeightsLen and DstLen return the smallest slice lengths that
// hold the tensors with the Conv's strides.
func (c Conv) SrcLen() int { n := c.normalized(); return span(n.srcDims(), n.SrcStrides) }

// WeightsLen is SrcLen's counterpart for the kernel.
func (c Conv) WeightsLen() int { n := c.normalized(); return span(n.weightsDims(), n.WeightsStrides) }

// DstLen is SrcLen's counterpart for the output.
func (c Conv) DstLen() int { n := c.normalized(); return span(n.dstDims(), n.DstStrides) }

func span(d, strides [4]int) int {
	last := 0
	for i := range 4 {
		if d[i] == 0 {
			return 0
		}
		last += (d[i] - 1) * strides[i]
	}
	return last + 1
}

// validate checks a normalized Conv.
func (c Conv) validate() error {
	var errs []error
	positive := func(name string, v int) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s is %d, want > 0", name, v))
		}
	}
	positive("Batch", c.Batch)
	positive("InChannels", c.InChannels)
	positive("Height", c.Height)
	positive("Width", c.Width)
	positive("OutChannels", c.OutChannels)
	positive("KernelHeight", c.KernelHeight)
	positive("KernelWidth", c.KernelWidth)
	positive("Groups", c.Groups)
	positive("Threads", c.Threads)
	for i, axis := range [2]string{"H", "W"} {
		if c.Strides[i] <= 0 || c.Dilations[i] <= 0 {
			errs = append(errs, fmt.Errorf("axis %s has stride %d and dilation %d, want both > 0 (Strides, Dilations)", axis, c.Strides[i], c.Dilations[i]))
		}
		if c.PadLow[i] < 0 || c.PadHigh[i] < 0 {
			errs = append(errs, fmt.Errorf("padding of axis %s is (%d, %d), want >= 0", axis, c.PadLow[i], c.PadHigh[i]))
		}
	}
	if c.Groups > 0 && (c.InChannels%c.Groups != 0 || c.OutChannels%c.Groups != 0) {
		errs = append(errs, fmt.Errorf("channel counts InChannels %d and OutChannels %d are not multiples of Groups %d", c.InChannels, c.OutChannels, c.Groups))
	}
	if c.Format != FormatPlain && c.Format != FormatBlocked && c.Format != FormatWeightsBlocked {
		errs = append(errs, fmt.Errorf("unknown Format %v", c.Format))
	}
	if len(errs) == 0 {
		if oh, ow := c.OutputSize(); oh <= 0 || ow <= 0 {
			errs = append(errs, fmt.Errorf("output size is %dx%d: the dilated kernel exceeds the padded input", oh, ow))
		}
	}
	for i, s := range [3][4]int{c.SrcStrides, c.WeightsStrides, c.DstStrides} {
		for _, v := range s {
			if v <= 0 {
				errs = append(errs, fmt.Errorf("%s is %v, want strides > 0", [3]string{"SrcStrides", "WeightsStrides", "DstStrides"}[i], s))
				break
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("onednn: invalid Conv: %w", errors.Join(errs...))
	}
	return nil
}

// Forward computes dst = conv(src, weights), overwriting dst.
func Forward(c Conv, src, weights, dst []float32) error {
	if c.BatchChunk > 0 {
		return chunked(c, directionForward, src, weights, dst)
	}
	return run(c, directionForward, src, weights, dst)
}

// BackwardData computes diffSrc, the gradient with respect to the input,
// from diffDst and weights, overwriting diffSrc (laid out with
// SrcStrides; diffDst with DstStrides).
func BackwardData(c Conv, diffDst, weights, diffSrc []float32) error {
	if c.BatchChunk > 0 {
		return chunked(c, directionBackwardData, diffDst, weights, diffSrc)
	}
	return run(c, directionBackwardData, diffDst, weights, diffSrc)
}

// BackwardWeights computes diffWeights, the gradient with respect to the
// kernel, from src and diffDst, overwriting diffWeights (laid out with
// WeightsStrides; diffDst with DstStrides).
func BackwardWeights(c Conv, src, diffDst, diffWeights []float32) error {
	if c.BatchChunk > 0 {
		return chunked(c, directionBackwardWeights, src, diffDst, diffWeights)
	}
	return run(c, directionBackwardWeights, src, diffDst, diffWeights)
}

// chunked runs a Conv with BatchChunk: one-thread primitives over fixed
// chunks of the batch, up to Threads of them at once. Forward and
// BackwardData write each chunk's own rows of the output; BackwardWeights
// writes each chunk's gradient to a buffer of its own (the first to
// diffWeights) and adds them pairwise in a fixed order.
func chunked(c Conv, dir direction, in0, in1, out []float32) error {
	if err := Available(); err != nil {
		return err
	}
	n := c.normalized()
	if err := n.validate(); err != nil {
		return err
	}
	lens := [3]int{span(n.srcDims(), n.SrcStrides), span(n.weightsDims(), n.WeightsStrides), span(n.dstDims(), n.DstStrides)}
	for i, s := range [][]float32{in0, in1, out} {
		if len(s) < lens[tensorRoles[dir][i]] {
			return run(c, dir, in0, in1, out) // reports the short slice
		}
	}
	batchStrides := [3]int{n.SrcStrides[0], 0, n.DstStrides[0]} // per role: src, weights, dst
	chunks := (n.Batch + n.BatchChunk - 1) / n.BatchChunk
	outs := make([][]float32, chunks)
	for i := range outs {
		switch {
		case dir != directionBackwardWeights:
			outs[i] = out[i*n.BatchChunk*batchStrides[tensorRoles[dir][2]]:]
		case i == 0:
			outs[i] = out
		default: // a partial kernel gradient, from the pool
			buf := partials.Get().(*[]float32)
			defer partials.Put(buf)
			if cap(*buf) < lens[1] {
				*buf = make([]float32, lens[1])
			}
			outs[i] = (*buf)[:lens[1]]
		}
	}
	errs := make([]error, chunks)
	one := func(i int) {
		part := n
		part.Threads, part.BatchChunk = 1, 0
		first := i * n.BatchChunk
		part.Batch = min(n.BatchChunk, n.Batch-first)
		errs[i] = runValid(part, dir, in0[first*batchStrides[tensorRoles[dir][0]]:],
			in1[first*batchStrides[tensorRoles[dir][1]]:], outs[i])
	}
	workers := min(n.Threads, chunks)
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(func() {
			for i := w; i < chunks; i += workers {
				one(i)
			}
		})
	}
	for i := 0; i < chunks; i += workers {
		one(i)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if dir == directionBackwardWeights {
		d, st := n.weightsDims(), n.WeightsStrides
		for step := 1; step < chunks; step *= 2 {
			for i := 0; i+step < chunks; i += 2 * step {
				addStrided(outs[i], outs[i+step], d, st)
			}
		}
	}
	return nil
}

// partials holds the buffers chunked computes partial kernel gradients
// in, so that a step allocates none.
var partials = sync.Pool{New: func() any { return new([]float32) }}

// addStrided adds the elements of src that a tensor of dimensions d and
// strides st holds into dst.
func addStrided(dst, src []float32, d, st [4]int) {
	for a := range d[0] {
		for b := range d[1] {
			for h := range d[2] {
				for w := range d[3] {
					i := a*st[0] + b*st[1] + h*st[2] + w*st[3]
					dst[i] += src[i]
				}
			}
		}
	}
}

// direction is one of a convolution's three computations.
type direction int

const (
	directionForward direction = iota
	directionBackwardData
	directionBackwardWeights
)

func (d direction) String() string {
	return [...]string{"Forward", "BackwardData", "BackwardWeights"}[d]
}

// tensorRoles names, per direction, which of the Conv's tensors the two
// inputs and the output are: 0 src, 1 weights, 2 dst.
var tensorRoles = [3][3]int{
	directionForward:         {0, 1, 2},
	directionBackwardData:    {2, 1, 0},
	directionBackwardWeights: {0, 2, 1},
}

var roleNames = [3]string{"src", "weights", "dst"}

// run validates the call and executes the cached primitive.
func run(c Conv, dir direction, in0, in1, out []float32) error {
	if err := Available(); err != nil {
		return err
	}
	c = c.normalized()
	if err := c.validate(); err != nil {
		return err
	}
	lens := [3]int{span(c.srcDims(), c.SrcStrides), span(c.weightsDims(), c.WeightsStrides), span(c.dstDims(), c.DstStrides)}
	for i, s := range [][]float32{in0, in1, out} {
		role := tensorRoles[dir][i]
		if len(s) < lens[role] {
			return fmt.Errorf("onednn: %v: the %s slice has %d elements, its strides need %d", dir, roleNames[role], len(s), lens[role])
		}
	}
	return runValid(c, dir, in0, in1, out)
}

// runValid executes the cached primitive of a normalized, valid Conv on
// slices long enough for it (chunked's parts, checked as a whole).
func runValid(c Conv, dir direction, in0, in1, out []float32) error {
	p, err := cached(c, dir)
	if err != nil {
		return err
	}
	return p.execute(in0, in1, out)
}
