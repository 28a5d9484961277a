package report

import (
	"fmt"
	"strings"
)

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
