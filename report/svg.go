package report

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
)

// LogScale chooses the y axis scale of the plots.
type LogScale int

// Log scale choices.
const (
	// LogAuto uses a log axis when all values of a plot are positive and
	// span more than two decades (a loss falling from 2 to 0.001).
	LogAuto LogScale = iota
	LogOn            // log axis; values ≤ 0 are left out, with a note
	LogOff           // always linear
)

// The Okabe-Ito palette, distinguishable with the common colour vision
// deficiencies; yellow comes last as it is faint on white.
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"}

// stageColors are the colours of a single run's stages, per loader index.
var stageColors = map[Stage][]string{
	StageTrain: {"#0072B2", "#56B4E9"},
	StageVal:   {"#D55E00", "#E69F00", "#CC79A7", "#000000"},
	StageTest:  {"#009E73", "#56B4E9", "#000000"},
	StageOther: {"#CC79A7", "#000000", "#E69F00"},
}

// Plot geometry, in SVG user units (the page scales the viewBox).
const (
	plotWidth    = 640.0
	plotAreaH    = 260.0
	marginRight  = 18.0
	charWidth    = 6.4 // estimated width of a character at 11px
	legendRowH   = 18.0
	maxHoverDots = 400 // hover targets per series, sampled evenly beyond
)

// pt is one drawn point.
type pt struct {
	x, y  float64
	epoch float64
}

// drawnLine is a Line with its resolved style.
type drawnLine struct {
	Line
	run    *Run
	style  lineStyle
	color  string
	marker int // 0 circle, 1 square, 2 triangle, 3 diamond
	label  string
	pts    []pt // finite (and, on a log axis, positive) points in step order
	gaps   []bool
	smooth []float64 // smoothed pts' values; nil when not smoothed
}

// plotStats is what the page learns from rendering a plot.
type plotStats struct {
	skipped  int     // NaN/Inf values not drawn
	nonPos   int     // values ≤ 0 not drawn on a log axis
	log      bool    // whether the y axis is logarithmic
	smoothed float64 // the widest smoothing window used; 0 when none
}

// renderPlot draws the group as an inline SVG element of class "plot".
func renderPlot(g Group, runs []*Run, scale LogScale, smooth float64) (string, plotStats) {
	compare := len(runs) > 1
	var st plotStats
	lines := make([]*drawnLine, 0, len(g.Lines))
	allPos := true
	yMin, yMax := math.Inf(1), math.Inf(-1)
	for _, l := range g.Lines {
		r := runs[l.Run]
		dl := &drawnLine{Line: l, run: r, style: styleOf(l.Name, l.Series, r.Metrics.Epochs())}
		loader := max(l.Name.Loader, 0)
		dl.marker = loader % 4
		if compare {
			dl.color = palette[l.Run%len(palette)]
			if dl.style == styleReference {
				dl.marker = 3
			} else if l.Name.Stage == StageTrain && dl.style == styleEpoch {
				dl.marker = 1
			}
		} else {
			cs := stageColors[l.Name.Stage]
			dl.color = cs[loader%len(cs)]
		}
		dl.label = l.Name.Full
		s := l.Series
		for _, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				st.skipped++
				continue
			}
			allPos = allPos && v > 0
			yMin, yMax = math.Min(yMin, v), math.Max(yMax, v)
		}
		lines = append(lines, dl)
	}
	finite := yMin <= yMax
	switch scale {
	case LogOn:
		st.log = finite && yMax > 0
	case LogAuto:
		st.log = finite && allPos && yMax/yMin > 100
	}
	// Collect the drawable points.
	xMin, xMax := math.Inf(1), math.Inf(-1)
	yMin, yMax = math.Inf(1), math.Inf(-1)
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
			xMin, xMax = math.Min(xMin, s.Steps[i]), math.Max(xMax, s.Steps[i])
			yMin, yMax = math.Min(yMin, v), math.Max(yMax, v)
		}
	}
	for _, dl := range lines {
		if dl.style != styleStep {
			continue
		}
		if w := smoothWindow(smooth, dl.pts, dl.gaps); w > 0 {
			if st.log {
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
			st.smoothed = math.Max(st.smoothed, w)
		}
	}
	empty := xMin > xMax
	if empty {
		xMin, xMax, yMin, yMax = 0, 1, 0, 1
	}

	// Axes.
	xTicks, xStep := StepTicks(xMin, xMax, 7)
	if xMin >= 0 && xTicks[0] < 0 {
		xTicks = xTicks[1:]
	}
	x0, x1 := xTicks[0], xTicks[len(xTicks)-1]
	var yTicks, yMinor []float64
	var yStep float64
	var y0, y1 float64
	if st.log {
		yTicks, yMinor = LogTicks(yMin, yMax)
		y0, y1 = yTicks[0], yTicks[len(yTicks)-1]
	} else {
		yTicks, yStep = NiceTicks(yMin, yMax, 6)
		y0, y1 = yTicks[0], yTicks[len(yTicks)-1]
	}
	yLabels := make([]string, len(yTicks))
	labelW := 0.0
	for i, v := range yTicks {
		if st.log {
			yLabels[i] = formatLogTick(v)
		} else {
			yLabels[i] = formatTick(v, yStep)
		}
		labelW = math.Max(labelW, textWidth(yLabels[i]))
	}

	// Epoch regions, when all runs of the plot agree on them.
	epochEnds := sharedEpochEnds(lines)
	showEpochs := len(epochEnds) >= 2 && len(epochEnds) <= 60

	// Vertical layout.
	var notes []string
	if st.log {
		notes = append(notes, "log scale")
	}
	if st.skipped > 0 {
		notes = append(notes, fmt.Sprintf("%d NaN/Inf %s not drawn", st.skipped, plural(st.skipped, "value", "values")))
	}
	if st.nonPos > 0 {
		notes = append(notes, fmt.Sprintf("%d %s ≤ 0 not drawn on the log axis", st.nonPos, plural(st.nonPos, "value", "values")))
	}
	if st.smoothed > 0 {
		notes = append(notes, fmt.Sprintf("noisy step series smoothed over ~%s points, raw values faint", formatValue(st.smoothed)))
	}
	top := 30.0
	if len(notes) > 0 {
		top += 14
	}
	if showEpochs {
		top += 14
	}
	left := 14 + labelW + 8
	right := plotWidth - marginRight
	pw := right - left
	bottom := top + plotAreaH
	legend := buildLegend(lines, compare, runs, left, right)
	height := bottom + 46 + legend.height + 6

	sx := func(x float64) float64 { return left + (x-x0)/(x1-x0)*pw }
	fy := func(y float64) float64 {
		if st.log {
			return math.Log10(y)
		}
		return y
	}
	sy := func(y float64) float64 { return bottom - (fy(y)-fy(y0))/(fy(y1)-fy(y0))*plotAreaH }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" data-metric="%s" viewBox="0 0 %s %s" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="%s" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif">`+"\n",
		esc(g.Base), num(plotWidth), num(height), esc(plotAriaLabel(g, lines, compare)))
	fmt.Fprintf(&b, `<text class="ptitle" x="%s" y="20" font-size="15" font-weight="600" fill="#222">%s</text>`+"\n", num(left), esc(g.Base))
	if len(notes) > 0 {
		fmt.Fprintf(&b, `<text class="pnote" x="%s" y="36" font-size="11" fill="#666">%s</text>`+"\n", num(left), esc(strings.Join(notes, " · ")))
	}

	// Grid and ticks.
	b.WriteString(`<g class="grid" stroke="#e6e6e6" stroke-width="1" shape-rendering="crispEdges">` + "\n")
	for _, v := range yMinor {
		if v > y0 && v < y1 {
			fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#f3f3f3"/>`+"\n", num(left), num(right), num(sy(v)), num(sy(v)))
		}
	}
	for _, v := range yTicks {
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s"/>`+"\n", num(left), num(right), num(sy(v)), num(sy(v)))
	}
	for _, v := range xTicks {
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s"/>`+"\n", num(sx(v)), num(sx(v)), num(top), num(bottom))
	}
	b.WriteString("</g>\n")
	if showEpochs {
		b.WriteString(`<g class="epochs" font-size="10" fill="#888" text-anchor="middle">` + "\n")
		prev := x0
		labelEvery := 1 + (len(epochEnds)-1)/12
		for e, end := range epochEnds {
			if e < len(epochEnds)-1 && end > x0 && end < x1 {
				fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#bbb" stroke-dasharray="3 3" shape-rendering="crispEdges"><title>end of epoch %d (step %s)</title></line>`+"\n",
					num(sx(end)), num(sx(end)), num(top), num(bottom), e, formatValue(end))
			}
			if e%labelEvery == 0 {
				lo, hi := math.Max(prev, x0), math.Min(end, x1)
				if e == len(epochEnds)-1 {
					hi = math.Max(hi, math.Min(xMax, x1))
				}
				if hi > lo {
					fmt.Fprintf(&b, `<text x="%s" y="%s">epoch %d</text>`+"\n", num((sx(lo)+sx(hi))/2), num(top-5), e)
				}
			}
			prev = end
		}
		b.WriteString("</g>\n")
	}
	b.WriteString(`<g class="axes" font-size="11" fill="#555">` + "\n")
	fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#888" shape-rendering="crispEdges"/>`+"\n", num(left), num(right), num(bottom), num(bottom))
	fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#888" shape-rendering="crispEdges"/>`+"\n", num(left), num(left), num(top), num(bottom))
	for i, v := range yTicks {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", num(left-6), num(sy(v)), esc(yLabels[i]))
	}
	for i, v := range xTicks {
		anchor := "middle"
		if i == len(xTicks)-1 && sx(v)+textWidth(formatTick(v, xStep))/2 > plotWidth {
			anchor = "end"
		}
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="%s">%s</text>`+"\n", num(sx(v)), num(bottom+16), anchor, esc(formatTick(v, xStep)))
	}
	fmt.Fprintf(&b, `<text class="xlabel" x="%s" y="%s" text-anchor="middle" fill="#333" font-size="12">step</text>`+"\n", num(left+pw/2), num(bottom+34))
	b.WriteString("</g>\n")

	if empty {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" font-size="13" fill="#a00">no finite values to plot</text>`+"\n", num(left+pw/2), num(top+plotAreaH/2))
	}

	// Series: step lines first, so markers of epoch series stay on top.
	order := make([]*drawnLine, len(lines))
	copy(order, lines)
	slices.SortStableFunc(order, func(a, b *drawnLine) int { return int(a.style) - int(b.style) })
	for _, dl := range order {
		fmt.Fprintf(&b, `<g class="series" data-series="%s" data-run="%s">`+"\n", esc(dl.Name.Full), esc(dl.run.Name))
		switch dl.style {
		case styleStep, styleEpoch:
			width, opacity := "1.6", "0.9"
			if dl.style == styleEpoch {
				width, opacity = "2.2", "1"
			} else if compare {
				opacity = "0.75"
			}
			dash := ""
			if compare && dl.Name.Stage == StageVal {
				dash = ` stroke-dasharray="7 3"`
			}
			if dl.smooth != nil {
				if d := pathData(dl, nil, sx, sy); d != "" {
					fmt.Fprintf(&b, `<path class="raw" d="%s" fill="none" stroke="%s" stroke-width="1.1" stroke-opacity="0.28" stroke-linejoin="round"%s/>`+"\n", d, dl.color, dash)
				}
				width = "1.9"
				if d := pathData(dl, dl.smooth, sx, sy); d != "" {
					fmt.Fprintf(&b, `<path class="smooth" d="%s" fill="none" stroke="%s" stroke-width="%s" stroke-opacity="%s" stroke-linejoin="round" stroke-linecap="round"%s/>`+"\n", d, dl.color, width, opacity, dash)
				}
			} else if d := pathData(dl, nil, sx, sy); d != "" {
				fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="%s" stroke-opacity="%s" stroke-linejoin="round" stroke-linecap="round"%s/>`+"\n", d, dl.color, width, opacity, dash)
			}
			if dl.style == styleEpoch {
				for _, p := range dl.pts {
					b.WriteString(marker(dl.marker, sx(p.x), sy(p.y), 3.6, dl.color, `stroke="#fff" stroke-width="1"`, pointTitle(dl, p, compare)))
				}
			} else {
				// Isolated points (between gaps) would be invisible as a line.
				for i, p := range dl.pts {
					isolated := (i == 0 || dl.gaps[i]) && (i == len(dl.pts)-1 || dl.gaps[i+1])
					if isolated {
						b.WriteString(marker(0, sx(p.x), sy(p.y), 2.5, dl.color, "", pointTitle(dl, p, compare)))
					}
				}
				stride := 1 + (len(dl.pts)-1)/maxHoverDots
				b.WriteString(`<g class="hover">`)
				for i, p := range dl.pts {
					if i%stride == 0 || i == len(dl.pts)-1 {
						title := pointTitle(dl, p, compare)
						if dl.smooth != nil {
							title += "\nsmoothed " + formatValue(dl.smooth[i])
						}
						fmt.Fprintf(&b, `<circle class="hit" cx="%s" cy="%s" r="4" fill="%s" fill-opacity="0"><title>%s</title></circle>`, num(sx(p.x)), num(sy(p.y)), dl.color, esc(title))
					}
				}
				b.WriteString("</g>\n")
			}
		case styleReference:
			for _, p := range dl.pts {
				y := sy(p.y)
				if !compare {
					fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="%s" stroke-width="1.5" stroke-dasharray="2 4" stroke-linecap="round"/>`+"\n", num(left), num(right), num(y), num(y), dl.color)
				}
				b.WriteString(marker(3, sx(p.x), y, 4.8, dl.color, `stroke="#fff" stroke-width="1"`, pointTitle(dl, p, compare)))
			}
		}
		b.WriteString("</g>\n")
	}
	b.WriteString(legend.svg(bottom + 50))
	b.WriteString("</svg>")
	return b.String(), st
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

// pathData returns the SVG path of a line's points, broken at gaps; ys
// replaces the points' values when not nil. Long lines are thinned to the
// first, lowest, highest and last point of each half-unit column, which
// draws the same envelope with a bounded number of vertices.
func pathData(dl *drawnLine, ys []float64, sx, sy func(float64) float64) string {
	if len(dl.pts) < 2 {
		return ""
	}
	thin := len(dl.pts) > 3000
	var b strings.Builder
	emit := func(cmd string, x, y float64) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(cmd + num(x) + "," + num(y))
	}
	type vertex struct{ x, y float64 }
	var bucket []vertex
	col := math.Inf(-1)
	flush := func() {
		if len(bucket) == 0 {
			return
		}
		lo, hi := 0, 0
		for i, v := range bucket {
			if v.y < bucket[lo].y {
				lo = i
			}
			if v.y > bucket[hi].y {
				hi = i
			}
		}
		keep := []int{0, lo, hi, len(bucket) - 1}
		slices.Sort(keep)
		for k, i := range slices.Compact(keep) {
			if k > 0 || b.Len() > 0 {
				emit("L", bucket[i].x, bucket[i].y)
			} else {
				emit("M", bucket[i].x, bucket[i].y)
			}
		}
		bucket = bucket[:0]
	}
	for i, p := range dl.pts {
		y := p.y
		if ys != nil {
			y = ys[i]
		}
		x, py := sx(p.x), sy(y)
		if i == 0 || dl.gaps[i] {
			flush()
			emit("M", x, py)
			col = math.Floor(x * 2)
			continue
		}
		if !thin {
			emit("L", x, py)
			continue
		}
		if c := math.Floor(x * 2); c != col {
			flush()
			col = c
		}
		bucket = append(bucket, vertex{x, py})
	}
	flush()
	return b.String()
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

// marker returns a marker shape centred on (x, y) with a hover title.
func marker(shape int, x, y, r float64, color, extra, title string) string {
	var el string
	switch shape {
	case 1:
		s := r * 0.9
		el = fmt.Sprintf(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s" %s>`, num(x-s), num(y-s), num(2*s), num(2*s), color, extra)
		return el + "<title>" + esc(title) + "</title></rect>\n"
	case 2:
		h := r * 1.15
		el = fmt.Sprintf(`<path d="M%s,%s L%s,%s L%s,%sZ" fill="%s" %s>`, num(x), num(y-h), num(x+h), num(y+h*0.8), num(x-h), num(y+h*0.8), color, extra)
		return el + "<title>" + esc(title) + "</title></path>\n"
	case 3:
		h := r * 1.2
		el = fmt.Sprintf(`<path d="M%s,%s L%s,%s L%s,%s L%s,%sZ" fill="%s" %s>`, num(x), num(y-h), num(x+h), num(y), num(x), num(y+h), num(x-h), num(y), color, extra)
		return el + "<title>" + esc(title) + "</title></path>\n"
	}
	el = fmt.Sprintf(`<circle cx="%s" cy="%s" r="%s" fill="%s" %s>`, num(x), num(y), num(r), color, extra)
	return el + "<title>" + esc(title) + "</title></circle>\n"
}

// pointTitle is the hover text of a point.
func pointTitle(dl *drawnLine, p pt, compare bool) string {
	var b strings.Builder
	if compare {
		b.WriteString(dl.run.Name + " · ")
	}
	b.WriteString(dl.Name.Full + " = " + formatValue(p.y) + "\nstep " + formatValue(p.x))
	if !math.IsNaN(p.epoch) {
		b.WriteString(" · epoch " + formatValue(p.epoch))
	}
	return b.String()
}

// legendItem is one legend entry: a style sample and a label.
type legendItem struct {
	label  string
	color  string
	style  lineStyle
	marker int
	dash   string
	thin   bool // a step series sample: thin line, no marker
	noLine bool // a marker alone
	run    bool // a run's colour (comparison legend)
}

// legendLayout is the legend placed in rows below the x axis.
type legendLayout struct {
	items  []legendItem
	xs, ys []float64 // item positions relative to the legend's top
	height float64
}

// buildLegend lists the plot's series: for one run every metric with its
// own colour; for several runs one colour per run followed by the line
// styles (in grey) telling the stages apart.
func buildLegend(lines []*drawnLine, compare bool, runs []*Run, left, right float64) legendLayout {
	var items []legendItem
	seen := map[string]bool{}
	if compare {
		for _, dl := range lines {
			if seen["run:"+dl.run.Name] {
				continue
			}
			seen["run:"+dl.run.Name] = true
			items = append(items, legendItem{label: dl.run.Name, color: dl.color, style: styleStep, run: true})
		}
	}
	for _, dl := range lines {
		item := legendItem{label: dl.Name.Full, color: dl.color, style: dl.style, marker: dl.marker, thin: dl.style == styleStep}
		if !compare && dl.style == styleReference && len(dl.pts) == 1 {
			item.label += " = " + formatValue(dl.pts[0].y)
		}
		item.noLine = compare && dl.style == styleReference
		if compare {
			item.color = "#666"
			if dl.Name.Stage == StageVal && dl.style != styleReference {
				item.dash = "7 3"
			}
		}
		key := item.label + "|" + fmt.Sprint(item.style, item.marker)
		if compare {
			key = dl.Name.Full // one key per metric, whatever the run
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		items = append(items, item)
	}
	l := legendLayout{items: items}
	x, y := left, 0.0
	for i, it := range items {
		if i > 0 && items[i-1].run && !it.run {
			x += 14 // set the stage styles apart from the runs
		}
		w := 30 + textWidth(it.label) + 16
		if x > left && x+w > right {
			x, y = left, y+legendRowH
		}
		l.xs = append(l.xs, x)
		l.ys = append(l.ys, y)
		x += w
	}
	if len(items) > 0 {
		l.height = y + legendRowH
	}
	return l
}

// svg draws the legend with its top at y.
func (l legendLayout) svg(y float64) string {
	var b strings.Builder
	b.WriteString(`<g class="legend" font-size="11.5" fill="#333">` + "\n")
	for i, it := range l.items {
		x, cy := l.xs[i], y+l.ys[i]+legendRowH/2-2
		fmt.Fprintf(&b, `<g class="legend-item">`)
		width, opacity := "2.2", "1"
		if it.thin {
			width, opacity = "1.6", "0.9"
		}
		dash := ""
		switch {
		case it.dash != "":
			dash = ` stroke-dasharray="` + it.dash + `"`
		case it.style == styleReference:
			dash = ` stroke-dasharray="2 4"`
			width = "1.6"
		}
		if !it.noLine {
			fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="%s" stroke-width="%s" stroke-opacity="%s" stroke-linecap="round"%s/>`,
				num(x), num(x+24), num(cy), num(cy), it.color, width, opacity, dash)
		}
		if it.style != styleStep {
			b.WriteString(strings.TrimSuffix(marker(it.marker, x+12, cy, 3.6, it.color, `stroke="#fff" stroke-width="1"`, it.label), "\n"))
		}
		fmt.Fprintf(&b, `<text x="%s" y="%s" dominant-baseline="middle">%s</text></g>`+"\n", num(x+30), num(cy), esc(it.label))
	}
	b.WriteString("</g>\n")
	return b.String()
}

// plotAriaLabel describes the plot for screen readers.
func plotAriaLabel(g Group, lines []*drawnLine, compare bool) string {
	var names []string
	seen := map[string]bool{}
	for _, dl := range lines {
		n := dl.Name.Full
		if compare {
			n = dl.run.Name + " " + n
		}
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return g.Base + " by step: " + strings.Join(names, ", ")
}

// textWidth estimates the rendered width of s at 11px.
func textWidth(s string) float64 {
	return float64(len([]rune(s))) * charWidth
}

// num formats an SVG coordinate.
func num(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	s = strings.TrimSuffix(s, ".0")
	if s == "-0" {
		s = "0"
	}
	return s
}

// esc escapes text for HTML and SVG.
func esc(s string) string { return html.EscapeString(s) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
