package onednn

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// runDirection runs one direction of c on fresh random inputs of the
// given seed and returns its output.
func runDirection(t testing.TB, c Conv, dir direction, seed uint64) []float32 {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	src, weights, dst := randomFloats(rng, c.SrcLen()), randomFloats(rng, c.WeightsLen()), randomFloats(rng, c.DstLen())
	var out []float32
	var err error
	switch dir {
	case directionForward:
		out = make([]float32, c.DstLen())
		err = Forward(c, src, weights, out)
	case directionBackwardData:
		out = make([]float32, c.SrcLen())
		err = BackwardData(c, dst, weights, out)
	case directionBackwardWeights:
		out = make([]float32, c.WeightsLen())
		err = BackwardWeights(c, src, dst, out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// determinismConvs are ResNet-like shapes at batch 64, where oneDNN
// parallelizes and BackwardWeights reduces over many examples.
var determinismConvs = []Conv{
	{Batch: 64, InChannels: 16, Height: 28, Width: 28, OutChannels: 16, KernelHeight: 3, KernelWidth: 3, PadLow: [2]int{1, 1}, PadHigh: [2]int{1, 1}},
	{Batch: 64, InChannels: 32, Height: 14, Width: 14, OutChannels: 64, KernelHeight: 3, KernelWidth: 3, Strides: [2]int{2, 2}, PadLow: [2]int{1, 1}, PadHigh: [2]int{1, 1}},
	{Batch: 64, InChannels: 1, Height: 28, Width: 28, OutChannels: 32, KernelHeight: 3, KernelWidth: 3},
}

// TestRepeatedCallsAreBitwiseIdentical checks that a direction run again
// with the same inputs and thread count gives the same bits, in both
// formats and at 1 and 2 threads; it logs whether 1 and 2 threads agree.
func TestRepeatedCallsAreBitwiseIdentical(t *testing.T) {
	requireLibrary(t)
	for i, base := range determinismConvs {
		for _, format := range []Format{FormatPlain, FormatBlocked, FormatWeightsBlocked} {
			for _, layout := range []bool{false, true} {
				c := base
				c.Format = format
				if layout {
					c = inGoMLXLayout(c)
				}
				for _, dir := range []direction{directionForward, directionBackwardData, directionBackwardWeights} {
					name := fmt.Sprintf("conv%d_%v_nhwc=%v_%v", i, format, layout, dir)
					t.Run(name, func(t *testing.T) {
						byThreads := map[int][]float32{}
						for _, threads := range []int{1, 2} {
							c.Threads = threads
							first := runDirection(t, c, dir, uint64(i))
							for range 3 {
								if again := runDirection(t, c, dir, uint64(i)); !slices.Equal(first, again) {
									t.Fatalf("threads=%d: a repeated call gave different bits", threads)
								}
							}
							byThreads[threads] = first
						}
						impl1, _ := Impl(withThreads1(c, 1), dir.String())
						impl2, _ := Impl(withThreads1(c, 2), dir.String())
						t.Logf("1 vs 2 threads bitwise equal: %v (impl %s / %s)", slices.Equal(byThreads[1], byThreads[2]), impl1, impl2)
					})
				}
			}
		}
	}
}

func withThreads1(c Conv, n int) Conv { c.Threads = n; return c }

// inGoMLXLayout returns c with NHWC activations and an HWIO kernel.
func inGoMLXLayout(c Conv) Conv {
	n := c.normalized()
	c.SrcStrides = Dense(n.srcDims(), [4]int{0, 2, 3, 1})
	c.WeightsStrides = Dense(n.weightsDims(), [4]int{2, 3, 1, 0})
	c.DstStrides = Dense(n.dstDims(), [4]int{0, 2, 3, 1})
	return c
}

// TestChunkedBitsDoNotDependOnThreads checks that with BatchChunk every
// direction gives the same bits at 1 and 2 threads, in every format
// (weights-blocked on GoMLX's layout, where the default picks it), for
// batches above and below the chunk, and that BackwardWeights stays
// within the reference's bound (odd batches, chunks that do not divide
// them, one chunk, a chunk per example).
func TestChunkedBitsDoNotDependOnThreads(t *testing.T) {
	requireLibrary(t)
	for i, base := range determinismConvs {
		for _, format := range []Format{FormatPlain, FormatBlocked, FormatWeightsBlocked} {
			for _, chunk := range []int{16, base.Batch + 1} {
				for _, dir := range []direction{directionForward, directionBackwardData, directionBackwardWeights} {
					t.Run(fmt.Sprintf("conv%d_%v_chunk%d_%v", i, format, chunk, dir), func(t *testing.T) {
						c := base
						if format == FormatWeightsBlocked {
							c = inGoMLXLayout(c)
						}
						c.Format, c.BatchChunk = format, chunk
						one := runDirection(t, withThreads1(c, 1), dir, uint64(i))
						two := runDirection(t, withThreads1(c, 2), dir, uint64(i))
						if !slices.Equal(one, two) {
							t.Fatal("1 and 2 threads gave different bits")
						}
					})
				}
			}
		}
	}
	// Odd batch, NHWC with gaps: still matches the reference.
	k := convCase{batch: 5, in: 6, h: 9, w: 9, out: 4, kh: 3, kw: 3, stride: [2]int{2, 2}, padLow: [2]int{1, 1}, padHigh: [2]int{1, 1},
		dilation: [2]int{1, 1}, groups: 2, layout: layoutGaps}
	for _, threads := range []int{1, 2} {
		for _, chunk := range []int{1, 2, 3, 5, 8} {
			c := k.conv(threads, FormatDefault)
			c.BatchChunk = chunk
			checkCase(t, c, 5)
		}
	}
}
