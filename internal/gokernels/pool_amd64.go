package gokernels

import (
	"simd/archsimd"

	"github.com/gomlx/compute/dtypes"
)

// hasVectorKernels reports whether the machine runs the pooling kernels'
// AVX-512 code.
func hasVectorKernels() bool { return archsimd.X86.AVX512() }

// signBits flips the sign of 16 float32s by xor.
var signBits = archsimd.BroadcastUint32x16(1 << 31)

// neg is -x, by the sign bit.
func neg(x archsimd.Float32x16) archsimd.Float32x16 {
	return x.AsUint32x16().Xor(signBits).AsFloat32x16()
}

// or is the bitwise or of x and y.
func or(x, y archsimd.Float32x16) archsimd.Float32x16 {
	return x.AsUint32x16().Or(y.AsUint32x16()).AsFloat32x16()
}

// minss is x86's MINSS on each lane: x where x < y, else y (y when
// either is NaN or both are zeros). archsimd's Min does not keep that rule
// (measured: +Inf for both Min orders of +Inf and NaN), so it is built
// from an ordered compare.
func minss(x, y archsimd.Float32x16) archsimd.Float32x16 {
	return x.IfElse(y.Greater(x), y)
}

// goMax is Go's max(a, b) on each lane as the compiler writes it for
// amd64, -(min(-a,-b) | min(min(-a,-b), -a)) with MINSS: the same bits,
// NaN payloads and signed zeros included.
func goMax(a, b archsimd.Float32x16) archsimd.Float32x16 {
	na := neg(a)
	r1 := minss(na, neg(b))
	return neg(or(r1, minss(r1, na)))
}

// goMin is Go's min(a, b) on each lane as the compiler writes it for
// amd64, min(a,b) | min(min(a,b), a) with MINSS.
func goMin(a, b archsimd.Float32x16) archsimd.Float32x16 {
	r1 := minss(a, b)
	return or(r1, minss(r1, a))
}

// poolRows writes the max (min) pooling of in to out, 16 values of a row
// at a time, from the lowest (highest) float32 over the window's
// positions in row-major order.
func poolRows(w windows, in, out []float32, isMin bool) {
	start, combine := dtypes.Float32.LowestValue().(float32), goMax
	if isMin {
		start, combine = dtypes.Float32.HighestValue().(float32), goMin
	}
	first := archsimd.BroadcastFloat32x16(start)
	w.each(func(origin, at int) {
		for l := 0; l < w.row; l += 16 {
			acc := first
			for _, off := range w.offsets {
				acc = combine(acc, archsimd.LoadFloat32x16(in[origin+off+l:]))
			}
			acc.Store(out[at+l:])
		}
	})
}

// scatterRows writes the pooling's gradient: at each window's chosen
// position 0 + source (so -0 becomes +0, as the backend's += on a zeroed
// output), zero at the others; 16 values of a row at a time.
func scatterRows(w windows, in, source, out []float32, isMin bool) {
	takes := make([]uint16, len(w.offsets))
	takes[0] = 0xFFFF
	var zero archsimd.Float32x16
	w.each(func(origin, at int) {
		for l := 0; l < w.row; l += 16 {
			best := archsimd.LoadFloat32x16(in[origin+w.offsets[0]+l:])
			for k := 1; k < len(w.offsets); k++ {
				v := archsimd.LoadFloat32x16(in[origin+w.offsets[k]+l:])
				var take archsimd.Mask32x16
				if isMin {
					take = best.Greater(v)
				} else {
					take = v.Greater(best)
				}
				take = take.Or(v.IsNaN())
				best = v.IfElse(take, best)
				takes[k] = take.ToBits()
			}
			src := zero.Add(archsimd.LoadFloat32x16(source[at+l:]))
			var later uint16 // lanes a later position took
			for k := len(w.offsets) - 1; k >= 0; k-- {
				src.Masked(archsimd.Mask32x16FromBits(takes[k] &^ later)).Store(out[origin+w.offsets[k]+l:])
				later |= takes[k]
			}
		}
	})
}
