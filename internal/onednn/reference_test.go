package onednn

import (
	"math"
	"math/rand/v2"
)

// reference holds a convolution's three results computed naively in
// float64, and per element the sum of the absolute values of the terms
// that were added (the scale of float32 rounding) and their count.
type reference struct {
	dst, diffSrc, diffWeights          []float64
	dstAbs, diffSrcAbs, diffWeightsAbs []float64
	dstTerms, diffSrcTerms, diffWTerms int
}

// at returns the offset of a 4-D index with strides.
func at(i [4]int, strides [4]int) int {
	return i[0]*strides[0] + i[1]*strides[1] + i[2]*strides[2] + i[3]*strides[3]
}

// referenceConv computes Forward(src, weights), BackwardData(diffDst,
// weights) and BackwardWeights(src, diffDst) of a normalized Conv with
// float64 accumulation; results are indexed like the Conv's slices.
func referenceConv(c Conv, src, weights, diffDst []float32) reference {
	oh, ow := c.OutputSize()
	r := reference{
		dst: make([]float64, c.DstLen()), dstAbs: make([]float64, c.DstLen()),
		diffSrc: make([]float64, c.SrcLen()), diffSrcAbs: make([]float64, c.SrcLen()),
		diffWeights: make([]float64, c.WeightsLen()), diffWeightsAbs: make([]float64, c.WeightsLen()),
	}
	cg, og := c.InChannels/c.Groups, c.OutChannels/c.Groups
	r.dstTerms = cg * c.KernelHeight * c.KernelWidth
	r.diffWTerms = c.Batch * oh * ow
	r.diffSrcTerms = og * c.KernelHeight * c.KernelWidth
	for n := range c.Batch {
		for o := range c.OutChannels {
			g := o / og
			for y := range oh {
				for x := range ow {
					di := at([4]int{n, o, y, x}, c.DstStrides)
					dy := float64(diffDst[di])
					for ci := range cg {
						for kh := range c.KernelHeight {
							h := y*c.Strides[0] - c.PadLow[0] + kh*c.Dilations[0]
							if h < 0 || h >= c.Height {
								continue
							}
							for kw := range c.KernelWidth {
								w := x*c.Strides[1] - c.PadLow[1] + kw*c.Dilations[1]
								if w < 0 || w >= c.Width {
									continue
								}
								si := at([4]int{n, g*cg + ci, h, w}, c.SrcStrides)
								wi := at([4]int{o, ci, kh, kw}, c.WeightsStrides)
								xv, wv := float64(src[si]), float64(weights[wi])
								r.dst[di] += xv * wv
								r.dstAbs[di] += math.Abs(xv * wv)
								r.diffSrc[si] += dy * wv
								r.diffSrcAbs[si] += math.Abs(dy * wv)
								r.diffWeights[wi] += xv * dy
								r.diffWeightsAbs[wi] += math.Abs(xv * dy)
							}
						}
					}
				}
			}
		}
	}
	return r
}

// randomFloats returns n uniform values in [-1, 1).
func randomFloats(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = 2*rng.Float32() - 1
	}
	return s
}
