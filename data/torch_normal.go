package data

import "math"

// torch 1.13's normal_fill_16_AVX2 and the Cephes-derived float32 log and
// sincos of its avx_mathfun.h (after Julien Pommier's sse_mathfun), one
// lane at a time. GCC builds them with FMA contraction (-ffp-contract=fast
// under -mavx2 -mfma): every multiply that feeds an add is one fused
// operation, which fma32 rounds once as the instruction does (up to the
// rare double rounding of a float64 FMA narrowed to float32). Each plain
// float32 product is converted explicitly, so that Go does not fuse it.

// fma32 is float32(a*b + c) with one rounding of the exact result to
// float64, then to float32.
func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}

// mul32 is a float32 product that Go may not fuse with an addition.
func mul32(a, b float32) float32 { return float32(a * b) }

// cephesLogf is avx_mathfun's log256_ps for a positive x.
func cephesLogf(x float32) float32 {
	const minNormPos = 0x1p-126
	x = max(x, minNormPos)
	bits := math.Float32bits(x)
	e := float32(int32(bits>>23)-0x7f) + 1
	x = math.Float32frombits(bits&^0x7f800000 | math.Float32bits(0.5)) // the mantissa, in [0.5, 1)
	if x < 0.707106781186547524 {                                      // sqrt(1/2)
		e--
		x = x - 1 + x
	} else {
		x--
	}
	z := mul32(x, x)
	y := float32(7.0376836292e-2)
	for _, p := range []float32{-1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
		-1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1} {
		y = fma32(y, x, p)
	}
	y = mul32(y, x)
	y = fma32(y, z, mul32(e, -2.12194440e-4))
	y = fma32(z, -0.5, y)
	x += y
	return fma32(e, 0.693359375, x)
}

// cephesSincosf is avx_mathfun's sincos256_ps.
func cephesSincosf(theta float32) (sin, cos float32) {
	signSin := math.Float32bits(theta) & 0x80000000
	x := float32(math.Abs(float64(theta)))
	j := (int32(mul32(x, 1.27323954473516)) + 1) &^ 1 // 4/π: the octant, rounded up to even
	y := float32(j)
	signSin ^= uint32(j&4) << 29
	signCos := uint32(^(j-2)&4) << 29
	sinPoly := j&2 != 0 // the sine polynomial gives the sine (else the cosine)
	// Extended-precision modular arithmetic: x - y·π/4 in three parts.
	x = fma32(y, -0.78515625, x)
	x = fma32(y, -2.4187564849853515625e-4, x)
	x = fma32(y, -3.77489497744594108e-8, x)
	z := mul32(x, x)
	c := fma32(2.443315711809948e-5, z, -1.388731625493765e-3)
	c = fma32(c, z, 4.166664568298827e-2)
	c = mul32(c, z)
	c = fma32(c, z, -mul32(z, 0.5)) + 1
	s := fma32(-1.9515295891e-4, z, 8.3321608736e-3)
	s = fma32(s, z, -1.6666654611e-1)
	s = mul32(s, z)
	s = fma32(s, x, x)
	if sinPoly {
		c, s = s, c
	}
	return math.Float32frombits(math.Float32bits(s) ^ signSin), math.Float32frombits(math.Float32bits(c) ^ signCos)
}

// normalFill16 is torch's normal_fill_16_AVX2 with mean 0 and std 1: the
// uniforms j and j+8 become the Box-Muller pair's cosine and sine values.
func normalFill16(data []float32) {
	const twoPi = float32(2 * math.Pi)
	for j := range 8 {
		radius := float32(math.Sqrt(float64(mul32(-2, cephesLogf(1-data[j])))))
		sin, cos := cephesSincosf(mul32(twoPi, data[j+8]))
		data[j] = mul32(radius, cos)
		data[j+8] = mul32(radius, sin)
	}
}
