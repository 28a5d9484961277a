package report

import (
	"math"
	"strconv"
	"strings"

	"github.com/voltml/volt/internal/jsonfloat"
)

// niceNum returns a "nice" number near x: 1, 2, 2.5 or 5 times a power of
// ten, rounded to the nearest when round is set, else the next at or above
// x (Heckbert, "Nice numbers for graph labels", Graphics Gems, 1990).
func niceNum(x float64, round bool) float64 {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return 1
	}
	exp := math.Floor(math.Log10(x))
	f := x / math.Pow(10, exp)
	var nf float64
	if round {
		switch {
		case f < 1.5:
			nf = 1
		case f < 2.25:
			nf = 2
		case f < 3.5:
			nf = 2.5
		case f < 7.5:
			nf = 5
		default:
			nf = 10
		}
	} else {
		switch {
		case f <= 1:
			nf = 1
		case f <= 2:
			nf = 2
		case f <= 2.5:
			nf = 2.5
		case f <= 5:
			nf = 5
		default:
			nf = 10
		}
	}
	return nf * math.Pow(10, exp)
}

// NiceTicks returns about n (at least 2) evenly spaced round tick values
// covering [lo, hi]: the first tick is at or below lo, the last at or above
// hi, and the spacing is 1, 2, 2.5 or 5 times a power of ten. An empty or
// degenerate range is widened around its value first.
func NiceTicks(lo, hi float64, n int) (ticks []float64, step float64) {
	if n < 2 {
		n = 2
	}
	if lo > hi {
		lo, hi = hi, lo
	}
	if hi == lo {
		d := math.Abs(lo) * 0.1
		if d == 0 {
			d = 1
		}
		lo, hi = lo-d, hi+d
	}
	step = niceNum(niceNum(hi-lo, false)/float64(n-1), true)
	start := math.Floor(lo/step+1e-9) * step
	end := math.Ceil(hi/step-1e-9) * step
	for i := 0; ; i++ {
		v := start + float64(i)*step
		if v > end+step*1e-9 || i > 1000 {
			break
		}
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		v = snap(v)
		ticks = append(ticks, v)
	}
	return ticks, step
}

// StepTicks is NiceTicks for an axis of whole numbers (training steps):
// the spacing is never below 1, so a range of a step or two ticks 199, 200
// rather than 199.0, 199.2, ….
func StepTicks(lo, hi float64, n int) (ticks []float64, step float64) {
	ticks, step = NiceTicks(lo, hi, n)
	if step >= 1 {
		return ticks, step
	}
	lo, hi = math.Floor(math.Min(lo, hi)), math.Ceil(math.Max(lo, hi))
	if lo == hi {
		lo, hi = lo-1, hi+1
	}
	ticks = ticks[:0]
	for v := lo; v <= hi; v++ {
		ticks = append(ticks, v)
	}
	return ticks, 1
}

// LogTicks returns tick values for a log axis covering [lo, hi] (both > 0):
// the major ticks are powers of ten, plus their 2× and 5× multiples when
// the values span at most two decades, from the last one at or below lo to
// the first at or above hi. minor holds the other 2…9 multiples in range,
// for unlabelled gridlines.
func LogTicks(lo, hi float64) (major, minor []float64) {
	e0 := math.Floor(math.Log10(lo) + 1e-9)
	e1 := math.Ceil(math.Log10(hi) - 1e-9)
	if e1 <= e0 {
		e1 = e0 + 1
	}
	dense := math.Log10(hi/lo) <= 2
	var all []float64
	var isMajor []bool
	for e := e0; e <= e1; e++ {
		p := math.Pow(10, e)
		for k := 1.0; k <= 9; k++ {
			all = append(all, snap(k*p))
			isMajor = append(isMajor, k == 1 || (dense && (k == 2 || k == 5)))
			if e == e1 {
				break
			}
		}
	}
	first, last := 0, len(all)-1
	for i := range all {
		if isMajor[i] && all[i] <= lo*(1+1e-9) {
			first = i
		}
	}
	for i := len(all) - 1; i >= 0; i-- {
		if isMajor[i] && all[i] >= hi*(1-1e-9) {
			last = i
		}
	}
	for i := first; i <= last; i++ {
		if isMajor[i] {
			major = append(major, all[i])
		} else {
			minor = append(minor, all[i])
		}
	}
	return major, minor
}

// snap rounds away binary noise: 0.1*3 becomes 0.3.
func snap(v float64) float64 {
	return mustParse(strconv.FormatFloat(v, 'g', 12, 64))
}

// formatTick formats a tick value given the spacing between ticks, with no
// more decimals than the spacing needs; large values get a k/M/G suffix.
func formatTick(v, step float64) string {
	if v == 0 {
		return "0"
	}
	a := math.Abs(v)
	if a >= 1e4 && step >= 1e3 {
		for _, u := range []struct {
			div float64
			sfx string
		}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
			if a >= u.div {
				return formatTick(v/u.div, step/u.div) + u.sfx
			}
		}
	}
	if a < 1e-4 || a >= 1e7 {
		return formatExp(v)
	}
	dec := 0
	if step > 0 {
		// The fewest decimals that write the spacing exactly.
		for ; dec < 15; dec++ {
			x := step * math.Pow(10, float64(dec))
			if math.Abs(x-math.Round(x)) < 1e-6*x {
				break
			}
		}
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// formatLogTick formats a tick of a log axis.
func formatLogTick(v float64) string {
	if v >= 1e-3 && v < 1e5 {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return formatExp(v)
}

// formatExp formats v as "2e-5" or "1.5e+08" without padding zeros.
func formatExp(v float64) string {
	s := strconv.FormatFloat(v, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	sign := ""
	if exp[0] == '-' {
		sign = "-"
	}
	exp = strings.TrimLeft(exp[1:], "0")
	if exp == "" {
		exp = "0"
	}
	return mant + "e" + sign + exp
}

// formatValue formats a metric value for tables and hover text.
func formatValue(v float64) string {
	if s, ok := jsonfloat.NonFinite(v); ok {
		return s
	}
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e9:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	a := math.Abs(v)
	if a < 1e-4 || a >= 1e6 {
		return formatExp(mustParse(strconv.FormatFloat(v, 'e', 3, 64)))
	}
	return strconv.FormatFloat(mustParse(strconv.FormatFloat(v, 'g', 5, 64)), 'f', -1, 64)
}

func mustParse(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}
