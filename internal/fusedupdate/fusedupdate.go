// Package fusedupdate applies the optimizers' updates to float32 parameters
// in place, in one pass over each parameter, on the host.
//
// The traced update (optim.Optimizer.ApplyWithOptions) builds Adam as
// thirteen element-wise graph operations per parameter, each a pass over
// memory with a fresh output buffer; on the pure-Go backend, where a
// buffer is host memory, those passes cost more than the model's matrix
// products for small models (issue 38: the MLP's Adam update took about a
// third of its step). The kernels here compute, per element, the very
// operations the graph does, in the same order and in float32, so that
// their results are bitwise those of the traced update (TestAdamEqualsGraph
// and friends); they read each parameter, gradient and state once and write
// them once.
package fusedupdate

import "math"

// AdamCoefficients are the scalars of one Adam or AdamW step, computed as the
// traced update computes them (Coefficients).
type AdamCoefficients struct {
	Beta1, OneMinusBeta1 float32
	Beta2, OneMinusBeta2 float32
	// StepSize is lr / (1 - beta1^t); BiasCorrection2Sqrt is sqrt(1 - beta2^t).
	StepSize, BiasCorrection2Sqrt float32
	Eps                           float32
	// Decay, when not 1, multiplies the parameter first (AdamW's decoupled
	// weight decay: 1 - lr*wd).
	Decay float32
	// L2, when not 0, is added times the parameter to the gradient (Adam's
	// coupled weight decay).
	L2 float32
}

// Coefficients returns the scalars of step t (counted from 1) with learning
// rate lr, as optim's traced update rounds them: every constant is a
// float32, 1-b is computed in float32, b^t is float32(math.Pow) of the two
// float32 values, as the pure-Go backend's Pow.
func Coefficients(lr float32, beta1, beta2, eps float64, t int64, adamW bool, weightDecay float64) AdamCoefficients {
	b1, b2 := float32(beta1), float32(beta2)
	tf := float32(t)
	bc1 := 1 - float32(math.Pow(float64(b1), float64(tf)))
	bc2 := 1 - float32(math.Pow(float64(b2), float64(tf)))
	c := AdamCoefficients{
		Beta1: b1, OneMinusBeta1: 1 - b1,
		Beta2: b2, OneMinusBeta2: 1 - b2,
		StepSize:            lr / bc1,
		BiasCorrection2Sqrt: float32(math.Sqrt(float64(bc2))),
		Eps:                 float32(eps),
		Decay:               1,
	}
	if weightDecay != 0 {
		if adamW {
			c.Decay = 1 - float32(lr*float32(weightDecay))
		} else {
			c.L2 = float32(weightDecay)
		}
	}
	return c
}

// Adam updates param, expAvg and expAvgSq in place with grad (all of one
// length).
func Adam(param, grad, expAvg, expAvgSq []float32, c AdamCoefficients) {
	n := len(param)
	if len(grad) != n || len(expAvg) != n || len(expAvgSq) != n {
		panic("fusedupdate.Adam: slices of different lengths")
	}
	done := adamVector(param, grad, expAvg, expAvgSq, c)
	adamScalar(param[done:], grad[done:], expAvg[done:], expAvgSq[done:], c)
}

// adamScalar is Adam one element at a time, in the traced update's order.
// Every product is converted to float32 on its own, which the Go spec says
// rounds it: the compiler may not fuse it with the sum into one FMA (the
// graph rounds each operation).
func adamScalar(param, grad, expAvg, expAvgSq []float32, c AdamCoefficients) {
	for i := range param {
		p, g := param[i], grad[i]
		if c.Decay != 1 {
			p = float32(p * c.Decay)
		}
		if c.L2 != 0 {
			g = g + float32(c.L2*p)
		}
		m := float32(c.Beta1*expAvg[i]) + float32(c.OneMinusBeta1*g)
		v := float32(c.Beta2*expAvgSq[i]) + float32(c.OneMinusBeta2*float32(g*g))
		expAvg[i], expAvgSq[i] = m, v
		denom := float32(float32(math.Sqrt(float64(v)))/c.BiasCorrection2Sqrt) + c.Eps
		param[i] = p - float32(c.StepSize*float32(m/denom))
	}
}

// SGD updates param (and momentumBuf, when momentum is not 0) in place with
// grad, as optim's traced SGD: weight decay added to the gradient, PyTorch's
// momentum buffer (the first step takes the gradient as it is), Nesterov.
// first says whether this is the optimizer's first step.
func SGD(param, grad, momentumBuf []float32, lr, momentum, dampening, weightDecay float32, nesterov, first bool) {
	oneMinusDampening := 1 - dampening
	for i := range param {
		p, g := param[i], grad[i]
		if weightDecay != 0 {
			g = g + float32(weightDecay*p)
		}
		if momentum != 0 {
			b := float32(momentum*momentumBuf[i]) + float32(oneMinusDampening*g)
			if first {
				b = g
			}
			momentumBuf[i] = b
			if nesterov {
				g = g + float32(momentum*b)
			} else {
				g = b
			}
		}
		param[i] = p - float32(lr*g)
	}
}
