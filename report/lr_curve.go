package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// LRCurve is a learning-rate finder's curve: the loss after each step of the
// sweep, at that step's learning rate, and the suggested point.
type LRCurve struct {
	LRs, Losses []float64
	// Suggested is the index of the suggested point (-1: none).
	Suggested int
	// LogLR draws the learning rate on a log axis (exponential sweeps).
	LogLR bool
}

// LRCurveSVG draws the curve as an inline SVG plot (loss against learning
// rate, the suggestion as a red dot); non-finite losses are left out.
func LRCurveSVG(c LRCurve) (string, error) {
	if len(c.LRs) != len(c.Losses) {
		return "", fmt.Errorf("report.LRCurveSVG: %d learning rates but %d losses", len(c.LRs), len(c.Losses))
	}
	const w, h, left, right, top, bottom = 560.0, 320.0, 64.0, 16.0, 16.0, 40.0
	xOf := func(lr float64) float64 {
		if c.LogLR {
			return math.Log10(lr)
		}
		return lr
	}
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for i, l := range c.Losses {
		if math.IsNaN(l) || math.IsInf(l, 0) || (c.LogLR && c.LRs[i] <= 0) {
			continue
		}
		x := xOf(c.LRs[i])
		xlo, xhi, ylo, yhi = min(xlo, x), max(xhi, x), min(ylo, l), max(yhi, l)
	}
	if math.IsInf(xlo, 1) {
		return "", fmt.Errorf("report.LRCurveSVG: no finite point to draw among %d", len(c.Losses))
	}
	if xhi == xlo {
		xhi = xlo + 1
	}
	if yhi == ylo {
		yhi = ylo + 1
	}
	sx := func(x float64) float64 { return left + (x-xlo)/(xhi-xlo)*(w-left-right) }
	sy := func(y float64) float64 { return top + (yhi-y)/(yhi-ylo)*(h-top-bottom) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot lr-find" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" width="%g" height="%g" role="img" aria-label="learning-rate finder: loss against learning rate">`, w, h, w, h)
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#ccc"/>`, left, top, w-left-right, h-top-bottom)
	yt, ystep := NiceTicks(ylo, yhi, 5)
	for _, v := range yt {
		if v < ylo || v > yhi {
			continue
		}
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" font-size="11" text-anchor="end">%s</text>`, left-6, sy(v)+4, html.EscapeString(formatTick(v, ystep)))
	}
	type xTick struct {
		x    float64
		text string
	}
	var xticks []xTick
	if c.LogLR {
		major, _ := LogTicks(math.Pow(10, xlo), math.Pow(10, xhi))
		for _, v := range major {
			xticks = append(xticks, xTick{math.Log10(v), formatLogTick(v)})
		}
	} else {
		ticks, step := NiceTicks(xlo, xhi, 5)
		for _, v := range ticks {
			xticks = append(xticks, xTick{v, formatTick(v, step)})
		}
	}
	for _, t := range xticks {
		if t.x < xlo-1e-9 || t.x > xhi+1e-9 {
			continue
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" font-size="11" text-anchor="middle">%s</text>`, sx(t.x), h-bottom+16, html.EscapeString(t.text))
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="11" text-anchor="middle">learning rate%s</text>`, left+(w-left-right)/2, h-6, map[bool]string{true: " (log)", false: ""}[c.LogLR])
	fmt.Fprintf(&b, `<text x="14" y="%g" font-size="11" text-anchor="middle" transform="rotate(-90 14 %g)">smoothed loss</text>`, top+(h-top-bottom)/2, top+(h-top-bottom)/2)
	b.WriteString(`<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="`)
	for i, l := range c.Losses {
		if math.IsNaN(l) || math.IsInf(l, 0) || (c.LogLR && c.LRs[i] <= 0) {
			continue
		}
		fmt.Fprintf(&b, "%.1f,%.1f ", sx(xOf(c.LRs[i])), sy(l))
	}
	b.WriteString(`"/>`)
	if i := c.Suggested; i >= 0 && i < len(c.Losses) && !math.IsNaN(c.Losses[i]) && !math.IsInf(c.Losses[i], 0) {
		fmt.Fprintf(&b, `<circle class="suggestion" cx="%.1f" cy="%.1f" r="5" fill="red"><title>suggested learning rate %s (loss %s)</title></circle>`,
			sx(xOf(c.LRs[i])), sy(c.Losses[i]), formatValue(c.LRs[i]), formatValue(c.Losses[i]))
	}
	b.WriteString(`</svg>`)
	return b.String(), nil
}

// WriteLRCurveHTML writes a self-contained page with the curve and the
// suggestion.
func WriteLRCurveHTML(w io.Writer, c LRCurve) error {
	svg, err := LRCurveSVG(c)
	if err != nil {
		return err
	}
	sugg := "no suggestion (too few points)"
	if c.Suggested >= 0 && c.Suggested < len(c.LRs) {
		sugg = fmt.Sprintf("suggested learning rate: %s (step %d)", formatValue(c.LRs[c.Suggested]), c.Suggested)
	}
	_, err = fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>volt: learning-rate finder</title></head>\n<body style=\"font-family: sans-serif\"><h1>Learning-rate finder</h1>\n<p>%s</p>\n%s\n</body></html>\n", html.EscapeString(sugg), svg)
	return err
}
