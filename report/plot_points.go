package report

import (
	"math"
	"slices"
)

// The points a plot draws: each line's finite values in step order with
// the gaps left by the others, and the smoothing of noisy step series.

// extent is the range of a plot's drawn points; xMin > xMax when there are
// none.
type extent struct{ xMin, xMax, yMin, yMax float64 }

// collectPoints fills each line's points and gaps in step order, leaving
// out non-finite values and, on a log axis, values ≤ 0 (counted in
// st.nonPos), and returns the points' extent.
func collectPoints(lines []*drawnLine, st *plotStats) extent {
	e := extent{math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)}
	for _, dl := range lines {
		s := dl.Series
		idx := make([]int, s.Len())
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case s.Steps[a] < s.Steps[b]:
				return -1
			case s.Steps[a] > s.Steps[b]:
				return 1
			}
			return 0
		})
		gap := false
		for _, i := range idx {
			v := s.Values[i]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				gap = true
				continue
			}
			if st.log && v <= 0 {
				st.nonPos++
				gap = true
				continue
			}
			dl.pts = append(dl.pts, pt{s.Steps[i], v, s.Epochs[i]})
			dl.gaps = append(dl.gaps, gap && len(dl.pts) > 1)
			gap = false
			e.xMin, e.xMax = math.Min(e.xMin, s.Steps[i]), math.Max(e.xMax, s.Steps[i])
			e.yMin, e.yMax = math.Min(e.yMin, v), math.Max(e.yMax, v)
		}
	}
	return e
}

// smoothLines sets the smoothed values of the noisy step series (on a log
// axis smoothing the logarithms, what is seen) and returns the widest
// window used, 0 when none.
func smoothLines(lines []*drawnLine, smooth float64, log bool) float64 {
	widest := 0.0
	for _, dl := range lines {
		if dl.style != styleStep {
			continue
		}
		w := smoothWindow(smooth, dl.pts, dl.gaps)
		if w <= 0 {
			continue
		}
		if log {
			// Smooth what is seen: the logarithms (all positive here).
			logs := make([]pt, len(dl.pts))
			for i, p := range dl.pts {
				logs[i] = pt{p.x, math.Log10(p.y), p.epoch}
			}
			dl.smooth = smoothed(logs, dl.gaps, w)
			for i, v := range dl.smooth {
				dl.smooth[i] = math.Pow(10, v)
			}
		} else {
			dl.smooth = smoothed(dl.pts, dl.gaps, w)
		}
		// A local fit may overshoot at the ends; stay within the data.
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range dl.pts {
			lo, hi = math.Min(lo, p.y), math.Max(hi, p.y)
		}
		for i, v := range dl.smooth {
			dl.smooth[i] = math.Min(math.Max(v, lo), hi)
		}
		widest = math.Max(widest, w)
	}
	return widest
}

// sharedEpochEnds returns the epoch end steps of the plot's runs when they
// all agree, else nil.
func sharedEpochEnds(lines []*drawnLine) []float64 {
	var ends []float64
	for i, dl := range lines {
		e := dl.run.Metrics.EpochEnds
		if i == 0 {
			ends = e
			continue
		}
		if !slices.EqualFunc(e, ends, func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }) {
			return nil
		}
	}
	for _, e := range ends {
		if math.IsNaN(e) {
			return nil
		}
	}
	return ends
}

// smoothWindow returns the width, in points, of the smoothing drawn over a
// step series of the given points: opt when positive, none when opt < 0,
// the series is short or not noisy (a learning-rate schedule), else about
// n/15 points (3 to 200).
func smoothWindow(opt float64, pts []pt, gaps []bool) float64 {
	n := len(pts)
	switch {
	case opt < 0 || n < 20:
		return 0
	case opt > 0:
		return opt
	}
	// Noisy series change direction often; smooth trends rarely do.
	turns, moves := 0, 0
	prev := 0.0
	for i := 1; i < n; i++ {
		if gaps[i] {
			prev = 0
			continue
		}
		d := pts[i].y - pts[i-1].y
		if d == 0 {
			continue
		}
		moves++
		if prev != 0 && (d > 0) != (prev > 0) {
			turns++
		}
		prev = d
	}
	if moves == 0 || float64(turns) < 0.2*float64(moves) {
		return 0
	}
	return math.Round(math.Min(math.Max(float64(n)/15, 3), 200))
}

// smoothed returns the points' values smoothed by a local linear fit with
// Gaussian weights over about window points (σ = window/2, cut at 3σ):
// centred, so the curve does not lag behind the data as a running average
// does, and unbiased on slopes and at the ends. It does not smooth across
// gaps.
func smoothed(pts []pt, gaps []bool, window float64) []float64 {
	sigma := window / 2
	reach := int(math.Ceil(3 * sigma))
	weights := make([]float64, reach+1)
	for k := range weights {
		weights[k] = math.Exp(-float64(k*k) / (2 * sigma * sigma))
	}
	// seg[i] numbers the gap-free segment holding point i.
	seg := make([]int, len(pts))
	for i := 1; i < len(pts); i++ {
		seg[i] = seg[i-1]
		if gaps[i] {
			seg[i]++
		}
	}
	out := make([]float64, len(pts))
	for i := range pts {
		var s0, s1, s2, t0, t1 float64
		for j := max(0, i-reach); j <= min(len(pts)-1, i+reach); j++ {
			if seg[j] != seg[i] {
				continue
			}
			w, dx := weights[abs(i-j)], float64(j-i)
			s0 += w
			s1 += w * dx
			s2 += w * dx * dx
			t0 += w * pts[j].y
			t1 += w * dx * pts[j].y
		}
		out[i] = t0 / s0
		if det := s0*s2 - s1*s1; det > 1e-9*s0*s2 {
			out[i] = (s2*t0 - s1*t1) / det
		}
	}
	return out
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
