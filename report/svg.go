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

// renderPlot draws the group as an inline SVG element of class "plot": the
// lines' styles and points (styleLines, collectPoints), the smoothing of
// noisy step series (smoothLines), the axes and the layout around them
// (newPlotFrame), then the drawing, layer by layer, and the legend.
func renderPlot(g Group, runs []*Run, scale LogScale, smooth float64) (string, plotStats) {
	compare := len(runs) > 1
	lines, st := styleLines(g, runs, compare, scale)
	ext := collectPoints(lines, &st)
	st.smoothed = smoothLines(lines, smooth, st.log)
	empty := ext.xMin > ext.xMax
	if empty {
		ext = extent{0, 1, 0, 1}
	}
	epochEnds := sharedEpochEnds(lines)
	showEpochs := len(epochEnds) >= 2 && len(epochEnds) <= 60
	notes := plotNotes(st)
	f := newPlotFrame(ext, st.log, len(notes) > 0, showEpochs)
	legend := buildLegend(lines, compare, runs, f.left, f.right)
	height := f.bottom + 46 + legend.height + 6

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" data-metric="%s" viewBox="0 0 %s %s" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="%s" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif">`+"\n",
		esc(g.Base), num(plotWidth), num(height), esc(plotAriaLabel(g, lines, compare)))
	fmt.Fprintf(&b, `<text class="ptitle" x="%s" y="20" font-size="15" font-weight="600" fill="#222">%s</text>`+"\n", num(f.left), esc(g.Base))
	if len(notes) > 0 {
		fmt.Fprintf(&b, `<text class="pnote" x="%s" y="36" font-size="11" fill="#666">%s</text>`+"\n", num(f.left), esc(strings.Join(notes, " · ")))
	}
	f.writeGrid(&b)
	if showEpochs {
		f.writeEpochs(&b, epochEnds, ext.xMax)
	}
	f.writeAxes(&b)
	if empty {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" font-size="13" fill="#a00">no finite values to plot</text>`+"\n", num(f.left+f.pw/2), num(f.top+plotAreaH/2))
	}
	// Series: step lines first, so markers of epoch series stay on top.
	order := make([]*drawnLine, len(lines))
	copy(order, lines)
	slices.SortStableFunc(order, func(a, b *drawnLine) int { return int(a.style) - int(b.style) })
	for _, dl := range order {
		f.writeSeries(&b, dl, compare)
	}
	b.WriteString(legend.svg(f.bottom + 50))
	b.WriteString("</svg>")
	return b.String(), st
}

// styleLines resolves each line's colour, marker and label (one colour per
// run when comparing runs, else one per stage and loader) and chooses the
// y axis scale from the finite values, counting the others in skipped.
func styleLines(g Group, runs []*Run, compare bool, scale LogScale) ([]*drawnLine, plotStats) {
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
		for _, v := range l.Series.Values {
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
	return lines, st
}

// plotNotes are the remarks under the plot's title: the log axis, the
// values not drawn, the smoothing.
func plotNotes(st plotStats) []string {
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
	return notes
}

// plotFrame is a plot's axes and geometry: the ticks and their labels, the
// plot area's edges and the scales from data to SVG coordinates.
type plotFrame struct {
	log                      bool
	xTicks, yTicks, yMinor   []float64
	xStep                    float64
	yLabels                  []string
	x0, x1, y0, y1           float64 // the axes' ends, in data units
	top, bottom, left, right float64 // the plot area, in SVG units
	pw                       float64 // the plot area's width
}

// newPlotFrame places the axes for the points' extent: the title's line,
// then a line of notes and one of epoch labels when there are any, and the
// y labels' width to the left of the plot area.
func newPlotFrame(ext extent, log, notes, epochs bool) plotFrame {
	f := plotFrame{log: log}
	f.xTicks, f.xStep = StepTicks(ext.xMin, ext.xMax, 7)
	if ext.xMin >= 0 && f.xTicks[0] < 0 {
		f.xTicks = f.xTicks[1:]
	}
	f.x0, f.x1 = f.xTicks[0], f.xTicks[len(f.xTicks)-1]
	var yStep float64
	if log {
		f.yTicks, f.yMinor = LogTicks(ext.yMin, ext.yMax)
	} else {
		f.yTicks, yStep = NiceTicks(ext.yMin, ext.yMax, 6)
	}
	f.y0, f.y1 = f.yTicks[0], f.yTicks[len(f.yTicks)-1]
	f.yLabels = make([]string, len(f.yTicks))
	labelW := 0.0
	for i, v := range f.yTicks {
		if log {
			f.yLabels[i] = formatLogTick(v)
		} else {
			f.yLabels[i] = formatTick(v, yStep)
		}
		labelW = math.Max(labelW, textWidth(f.yLabels[i]))
	}
	f.top = 30.0
	if notes {
		f.top += 14
	}
	if epochs {
		f.top += 14
	}
	f.left = 14 + labelW + 8
	f.right = plotWidth - marginRight
	f.pw = f.right - f.left
	f.bottom = f.top + plotAreaH
	return f
}

// sx maps a step to its x coordinate.
func (f *plotFrame) sx(x float64) float64 { return f.left + (x-f.x0)/(f.x1-f.x0)*f.pw }

// sy maps a value to its y coordinate, on the log axis by its logarithm.
func (f *plotFrame) sy(y float64) float64 {
	fy := func(y float64) float64 {
		if f.log {
			return math.Log10(y)
		}
		return y
	}
	return f.bottom - (fy(y)-fy(f.y0))/(fy(f.y1)-fy(f.y0))*plotAreaH
}

// writeGrid draws the grid lines at the ticks (and the log axis's minor
// ticks).
func (f *plotFrame) writeGrid(b *strings.Builder) {
	b.WriteString(`<g class="grid" stroke="#e6e6e6" stroke-width="1" shape-rendering="crispEdges">` + "\n")
	for _, v := range f.yMinor {
		if v > f.y0 && v < f.y1 {
			fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#f3f3f3"/>`+"\n", num(f.left), num(f.right), num(f.sy(v)), num(f.sy(v)))
		}
	}
	for _, v := range f.yTicks {
		fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s"/>`+"\n", num(f.left), num(f.right), num(f.sy(v)), num(f.sy(v)))
	}
	for _, v := range f.xTicks {
		fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s"/>`+"\n", num(f.sx(v)), num(f.sx(v)), num(f.top), num(f.bottom))
	}
	b.WriteString("</g>\n")
}

// writeEpochs draws the epoch boundaries and labels (every epoch's, or
// every few when there are many); the last epoch's label is centred up to
// xMax, the last drawn step.
func (f *plotFrame) writeEpochs(b *strings.Builder, epochEnds []float64, xMax float64) {
	b.WriteString(`<g class="epochs" font-size="10" fill="#888" text-anchor="middle">` + "\n")
	prev := f.x0
	labelEvery := 1 + (len(epochEnds)-1)/12
	for e, end := range epochEnds {
		if e < len(epochEnds)-1 && end > f.x0 && end < f.x1 {
			fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#bbb" stroke-dasharray="3 3" shape-rendering="crispEdges"><title>end of epoch %d (step %s)</title></line>`+"\n",
				num(f.sx(end)), num(f.sx(end)), num(f.top), num(f.bottom), e, formatValue(end))
		}
		if e%labelEvery == 0 {
			lo, hi := math.Max(prev, f.x0), math.Min(end, f.x1)
			if e == len(epochEnds)-1 {
				hi = math.Max(hi, math.Min(xMax, f.x1))
			}
			if hi > lo {
				fmt.Fprintf(b, `<text x="%s" y="%s">epoch %d</text>`+"\n", num((f.sx(lo)+f.sx(hi))/2), num(f.top-5), e)
			}
		}
		prev = end
	}
	b.WriteString("</g>\n")
}

// writeAxes draws the axis lines, the tick labels and the x axis's title.
func (f *plotFrame) writeAxes(b *strings.Builder) {
	b.WriteString(`<g class="axes" font-size="11" fill="#555">` + "\n")
	fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#888" shape-rendering="crispEdges"/>`+"\n", num(f.left), num(f.right), num(f.bottom), num(f.bottom))
	fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#888" shape-rendering="crispEdges"/>`+"\n", num(f.left), num(f.left), num(f.top), num(f.bottom))
	for i, v := range f.yTicks {
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", num(f.left-6), num(f.sy(v)), esc(f.yLabels[i]))
	}
	for i, v := range f.xTicks {
		anchor := "middle"
		if i == len(f.xTicks)-1 && f.sx(v)+textWidth(formatTick(v, f.xStep))/2 > plotWidth {
			anchor = "end"
		}
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="%s">%s</text>`+"\n", num(f.sx(v)), num(f.bottom+16), anchor, esc(formatTick(v, f.xStep)))
	}
	fmt.Fprintf(b, `<text class="xlabel" x="%s" y="%s" text-anchor="middle" fill="#333" font-size="12">step</text>`+"\n", num(f.left+f.pw/2), num(f.bottom+34))
	b.WriteString("</g>\n")
}

// writeSeries draws one line: a step or epoch series as a path (the faint
// raw values under the smoothed curve when smoothed) with its markers and
// hover targets, a reference value as a marker (and, for a single run, a
// dotted line across the plot).
func (f *plotFrame) writeSeries(b *strings.Builder, dl *drawnLine, compare bool) {
	fmt.Fprintf(b, `<g class="series" data-series="%s" data-run="%s">`+"\n", esc(dl.Name.Full), esc(dl.run.Name))
	switch dl.style {
	case styleStep, styleEpoch:
		f.writePath(b, dl, compare)
		if dl.style == styleEpoch {
			for _, p := range dl.pts {
				b.WriteString(marker(dl.marker, f.sx(p.x), f.sy(p.y), 3.6, dl.color, `stroke="#fff" stroke-width="1"`, pointTitle(dl, p, compare)))
			}
		} else {
			f.writeStepPoints(b, dl, compare)
		}
	case styleReference:
		for _, p := range dl.pts {
			y := f.sy(p.y)
			if !compare {
				fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="%s" stroke-width="1.5" stroke-dasharray="2 4" stroke-linecap="round"/>`+"\n", num(f.left), num(f.right), num(y), num(y), dl.color)
			}
			b.WriteString(marker(3, f.sx(p.x), y, 4.8, dl.color, `stroke="#fff" stroke-width="1"`, pointTitle(dl, p, compare)))
		}
	}
	b.WriteString("</g>\n")
}

// writePath draws a step or epoch series' line: validation dashed when
// comparing runs, the raw values faint under the smoothed curve.
func (f *plotFrame) writePath(b *strings.Builder, dl *drawnLine, compare bool) {
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
		if d := pathData(dl, nil, f.sx, f.sy); d != "" {
			fmt.Fprintf(b, `<path class="raw" d="%s" fill="none" stroke="%s" stroke-width="1.1" stroke-opacity="0.28" stroke-linejoin="round"%s/>`+"\n", d, dl.color, dash)
		}
		width = "1.9"
		if d := pathData(dl, dl.smooth, f.sx, f.sy); d != "" {
			fmt.Fprintf(b, `<path class="smooth" d="%s" fill="none" stroke="%s" stroke-width="%s" stroke-opacity="%s" stroke-linejoin="round" stroke-linecap="round"%s/>`+"\n", d, dl.color, width, opacity, dash)
		}
	} else if d := pathData(dl, nil, f.sx, f.sy); d != "" {
		fmt.Fprintf(b, `<path d="%s" fill="none" stroke="%s" stroke-width="%s" stroke-opacity="%s" stroke-linejoin="round" stroke-linecap="round"%s/>`+"\n", d, dl.color, width, opacity, dash)
	}
}

// writeStepPoints draws a step series' isolated points (between gaps, which
// a line would not show) and its hover targets, at most maxHoverDots of
// them, evenly sampled.
func (f *plotFrame) writeStepPoints(b *strings.Builder, dl *drawnLine, compare bool) {
	for i, p := range dl.pts {
		isolated := (i == 0 || dl.gaps[i]) && (i == len(dl.pts)-1 || dl.gaps[i+1])
		if isolated {
			b.WriteString(marker(0, f.sx(p.x), f.sy(p.y), 2.5, dl.color, "", pointTitle(dl, p, compare)))
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
			fmt.Fprintf(b, `<circle class="hit" cx="%s" cy="%s" r="4" fill="%s" fill-opacity="0"><title>%s</title></circle>`, num(f.sx(p.x)), num(f.sy(p.y)), dl.color, esc(title))
		}
	}
	b.WriteString("</g>\n")
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
