package tuner

import "math"

// Suggest returns the index of the steepest descent of losses, as Lightning's
// _LRFinder.suggestion: the points skipBegin.. len-skipEnd, non-finite ones
// dropped, their gradient (central differences inside, one-sided at the ends,
// torch.gradient's) and its minimum, offset by skipBegin. ok is false when
// fewer than two points remain. Like Lightning, the index counts the dropped
// non-finite points as if they were not there.
func Suggest(losses []float64, skipBegin, skipEnd int) (index int, ok bool) {
	if skipBegin < 0 || skipEnd < 0 {
		return 0, false
	}
	end := len(losses) - skipEnd
	if skipEnd == 0 {
		// Python's losses[skip_begin:-0] is empty.
		end = 0
	}
	if skipBegin >= end {
		return 0, false
	}
	var kept []float64
	for _, v := range losses[skipBegin:end] {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			kept = append(kept, v)
		}
	}
	if len(kept) < 2 {
		return 0, false
	}
	best, bestGrad := 0, math.Inf(1)
	for i := range kept {
		var g float64
		switch i {
		case 0:
			g = kept[1] - kept[0]
		case len(kept) - 1:
			g = kept[i] - kept[i-1]
		default:
			g = (kept[i+1] - kept[i-1]) / 2
		}
		if g < bestGrad {
			best, bestGrad = i, g
		}
	}
	return best + skipBegin, true
}
