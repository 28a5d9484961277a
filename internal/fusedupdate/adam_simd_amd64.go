//go:build goexperiment.simd && amd64

package fusedupdate

import "simd/archsimd"

// adamVector runs Adam 16 elements at a time with AVX-512 where the CPU has
// it and returns how many leading elements it did (a multiple of 16; 0
// without AVX-512). Each lane computes what adamScalar does, rounding every
// operation on its own (no fused multiply-add).
func adamVector(param, grad, expAvg, expAvgSq []float32, c AdamCoefficients) int {
	if !archsimd.X86.AVX512() {
		return 0
	}
	n := len(param) &^ 15
	b1, omb1 := archsimd.BroadcastFloat32x16(c.Beta1), archsimd.BroadcastFloat32x16(c.OneMinusBeta1)
	b2, omb2 := archsimd.BroadcastFloat32x16(c.Beta2), archsimd.BroadcastFloat32x16(c.OneMinusBeta2)
	step, bc2 := archsimd.BroadcastFloat32x16(c.StepSize), archsimd.BroadcastFloat32x16(c.BiasCorrection2Sqrt)
	eps := archsimd.BroadcastFloat32x16(c.Eps)
	decay, l2 := archsimd.BroadcastFloat32x16(c.Decay), archsimd.BroadcastFloat32x16(c.L2)
	withDecay, withL2 := c.Decay != 1, c.L2 != 0
	for i := 0; i < n; i += 16 {
		p := archsimd.LoadFloat32x16(param[i : i+16])
		g := archsimd.LoadFloat32x16(grad[i : i+16])
		if withDecay {
			p = p.Mul(decay)
		}
		if withL2 {
			g = g.Add(l2.Mul(p))
		}
		m := b1.Mul(archsimd.LoadFloat32x16(expAvg[i : i+16])).Add(omb1.Mul(g))
		v := b2.Mul(archsimd.LoadFloat32x16(expAvgSq[i : i+16])).Add(omb2.Mul(g.Mul(g)))
		m.Store(expAvg[i : i+16])
		v.Store(expAvgSq[i : i+16])
		denom := v.Sqrt().Div(bc2).Add(eps)
		p.Sub(step.Mul(m.Div(denom))).Store(param[i : i+16])
	}
	return n
}
