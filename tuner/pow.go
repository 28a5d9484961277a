package tuner

import (
	"math"
	"math/big"
)

// powPrec is the working precision of pow, in bits: far beyond float64's 53,
// so that rounding the result once gives the correctly rounded power.
const powPrec = 160

// pow returns x**y correctly rounded (x > 0), as C's pow, which Python's **
// and so Lightning's sweep use; Go's math.Pow can be an ulp off, which would
// make the sweep's learning rates differ from Lightning's in the last bit.
func pow(x, y float64) float64 {
	if x <= 0 || math.IsInf(x, 0) || math.IsNaN(x) || math.IsNaN(y) || math.IsInf(y, 0) {
		return math.Pow(x, y)
	}
	if y == 0 || x == 1 {
		return 1
	}
	l := bigLog(new(big.Float).SetPrec(powPrec).SetFloat64(x))
	l.Mul(l, new(big.Float).SetPrec(powPrec).SetFloat64(y))
	f, _ := bigExp(l).Float64()
	return f
}

// bigLn2 is ln 2 at powPrec bits: 2·atanh(1/3).
var bigLn2 = func() *big.Float {
	third := new(big.Float).SetPrec(powPrec).Quo(newBig(1), newBig(3))
	return bigAtanh2(third)
}()

func newBig(v float64) *big.Float { return new(big.Float).SetPrec(powPrec).SetFloat64(v) }

// bigAtanh2 returns 2·atanh(z) = 2·(z + z³/3 + z⁵/5 + …) for |z| ≤ 1/3.
func bigAtanh2(z *big.Float) *big.Float {
	sum := new(big.Float).SetPrec(powPrec)
	z2 := new(big.Float).SetPrec(powPrec).Mul(z, z)
	term := new(big.Float).SetPrec(powPrec).Set(z)
	eps := new(big.Float).SetPrec(powPrec).SetMantExp(newBig(1), -powPrec)
	for k := 1; ; k += 2 {
		t := new(big.Float).SetPrec(powPrec).Quo(term, newBig(float64(k)))
		sum.Add(sum, t)
		if new(big.Float).Abs(t).Cmp(eps) < 0 {
			break
		}
		term.Mul(term, z2)
	}
	return sum.Mul(sum, newBig(2))
}

// bigLog returns ln x for x > 0: x = m·2^e with m in [0.5, 1), ln m =
// 2·atanh((m-1)/(m+1)).
func bigLog(x *big.Float) *big.Float {
	m := new(big.Float).SetPrec(powPrec)
	e := x.MantExp(m)
	num := new(big.Float).SetPrec(powPrec).Sub(m, newBig(1))
	den := new(big.Float).SetPrec(powPrec).Add(m, newBig(1))
	l := bigAtanh2(num.Quo(num, den))
	return l.Add(l, new(big.Float).SetPrec(powPrec).Mul(bigLn2, newBig(float64(e))))
}

// bigExp returns e^x: x = k·ln2 + r with |r| ≤ ln2/2, e^r by its Taylor
// series on r/2^16 squared 16 times, scaled by 2^k.
func bigExp(x *big.Float) *big.Float {
	kf, _ := new(big.Float).Quo(x, bigLn2).Float64()
	k := math.Round(kf)
	r := new(big.Float).SetPrec(powPrec).Sub(x, new(big.Float).SetPrec(powPrec).Mul(bigLn2, newBig(k)))
	const halvings = 16
	r.SetMantExp(r, -halvings)
	sum, term := newBig(1), newBig(1)
	eps := new(big.Float).SetPrec(powPrec).SetMantExp(newBig(1), -powPrec)
	for n := 1; ; n++ {
		term.Mul(term, r)
		term.Quo(term, newBig(float64(n)))
		sum.Add(sum, term)
		if new(big.Float).Abs(term).Cmp(eps) < 0 {
			break
		}
	}
	for range halvings {
		sum.Mul(sum, sum)
	}
	return sum.SetMantExp(sum, int(k))
}
