package report

import (
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Options configure a report page.
type Options struct {
	// Title heads the page; empty means "volt report: <run names>".
	Title string
	// LogScale chooses the plots' y axes; the zero value is LogAuto.
	LogScale LogScale
	// Smooth is the width, in points, of the centred Gaussian smoothing
	// drawn over noisy step-level series (raw values stay visible, faint):
	// 0 picks one from the number of points, a negative value turns
	// smoothing off.
	Smooth float64
	// Skipped lists directories left out (such as a version_* directory
	// without metrics.csv), shown as a note.
	Skipped []string
}

// Result describes a written page.
type Result struct {
	Plots    int      // <svg class="plot"> elements: one per base metric
	LRCurves int      // learning-rate finder curves drawn (runs with lr_find.csv)
	Warnings []string // notes also shown on the page: empty logs, NaNs, …
}

// Render writes the report of runs as one self-contained HTML page: a run
// summary, one SVG plot per base metric (all stages and runs on shared
// axes) and the hyperparameters table. The page has no scripts and loads
// nothing.
func Render(w io.Writer, runs []*Run, opts Options) (*Result, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("report: no runs to report")
	}
	res := &Result{}
	p := page{Compare: len(runs) > 1, Title: opts.Title}
	if p.Title == "" {
		names := make([]string, len(runs))
		for i, r := range runs {
			names[i] = r.Name
		}
		p.Title = "volt report: " + strings.Join(names, ", ")
	}
	for _, d := range opts.Skipped {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s skipped: it holds no %s", d, MetricsFileName))
	}
	for i, r := range runs {
		p.Runs = append(p.Runs, runRow{
			Name:    r.Name,
			Dir:     r.Dir,
			Color:   palette[i%len(palette)],
			Rows:    r.Metrics.Rows,
			Steps:   stepText(r.Metrics),
			Epochs:  r.Metrics.Epochs(),
			Metrics: len(r.Metrics.Names),
			Hparams: len(r.Hparams),
		})
		if r.Metrics.Rows == 0 || len(r.Metrics.Names) == 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %s has no logged values yet (header only); nothing to plot for this run", r.Name, r.Dir+"/"+MetricsFileName))
		}
		if r.Hparams == nil && len(r.Notes) == 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: no %s in %s", r.Name, HparamsFileName, r.Dir))
		}
		for _, n := range r.Notes {
			res.Warnings = append(res.Warnings, r.Name+": "+n)
		}
	}
	groups := GroupMetrics(runs)
	for _, g := range groups {
		svg, st := renderPlot(g, runs, opts.LogScale, opts.Smooth)
		p.Plots = append(p.Plots, template.HTML(svg))
		if st.skipped > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %d NaN/Inf %s not drawn", g.Base, st.skipped, plural(st.skipped, "value", "values")))
		}
	}
	res.Plots = len(p.Plots)
	for i, r := range runs {
		if r.LRFind == nil {
			continue
		}
		sec, err := lrFindSection(r, palette[i%len(palette)])
		if err != nil {
			res.Warnings = append(res.Warnings, r.Name+": learning-rate finder curve not drawn: "+err.Error())
			continue
		}
		p.LRFinds = append(p.LRFinds, sec)
	}
	res.LRCurves = len(p.LRFinds)
	p.Values = valueTable(groups, runs)
	p.HparamKeys, p.HparamRows, p.HparamDiffs = hparamTable(runs)
	p.Notes = res.Warnings
	if err := pageTmpl.Execute(w, p); err != nil {
		return nil, fmt.Errorf("report: write page: %w", err)
	}
	return res, nil
}

// page is the template data.
type page struct {
	Title       string
	Compare     bool
	Runs        []runRow
	Notes       []string
	Plots       []template.HTML
	LRFinds     []lrFind
	Values      []valueRow
	HparamKeys  int
	HparamRows  []hparamRow
	HparamDiffs int
}

type runRow struct {
	Name, Dir, Color string
	Rows             int
	Steps            string
	Epochs           int
	Metrics          int
	Hparams          int
}

// valueRow is one metric of the final/best values table.
type valueRow struct {
	Metric string
	Better string // "min", "max" or ""
	Cells  []valueCell
}

type valueCell struct {
	Final, Best, BestStep string
	Count, NonFinite      int
	Win                   bool // the best run for this metric
	None                  bool // the run did not log it
}

// stepText describes the steps of a run.
func stepText(m *Metrics) string {
	if m.Rows == 0 {
		return "–"
	}
	return formatValue(m.MaxStep)
}

// valueTable lists each metric's final and best values per run, in plot
// order.
func valueTable(groups []Group, runs []*Run) []valueRow {
	var rows []valueRow
	index := map[string]int{}
	for _, g := range groups {
		dir := direction(g.Base)
		for _, l := range g.Lines {
			i, ok := index[l.Name.Full]
			if !ok {
				i = len(rows)
				index[l.Name.Full] = i
				row := valueRow{Metric: l.Name.Full, Cells: make([]valueCell, len(runs))}
				switch dir {
				case -1:
					row.Better = "min"
				case 1:
					row.Better = "max"
				}
				for c := range row.Cells {
					row.Cells[c].None = true
				}
				rows = append(rows, row)
			}
			rows[i].Cells[l.Run] = summarize(l.Series, dir)
		}
	}
	for ri := range rows {
		r := &rows[ri]
		if r.Better == "" || len(runs) < 2 {
			continue
		}
		best, at := math.NaN(), -1
		for c, cell := range r.Cells {
			v, err := strconv.ParseFloat(cell.bestRaw(), 64)
			if cell.None || err != nil || math.IsNaN(v) {
				continue
			}
			if at < 0 || (r.Better == "min" && v < best) || (r.Better == "max" && v > best) {
				best, at = v, c
			}
		}
		if at >= 0 {
			r.Cells[at].Win = true
		}
	}
	return rows
}

// bestRaw returns the cell's best value as text for comparing.
func (c valueCell) bestRaw() string {
	if c.Best != "" {
		return c.Best
	}
	return c.Final
}

// summarize computes a series' final value and, when better values are
// known to be smaller (dir -1) or larger (+1), its best one.
func summarize(s *Series, dir int) valueCell {
	c := valueCell{Count: s.Len(), NonFinite: s.NonFinite(), Final: formatValue(s.Values[s.Len()-1])}
	if dir == 0 || s.Len() < 2 {
		return c
	}
	best, at := math.NaN(), -1
	for i, v := range s.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if at < 0 || (dir < 0 && v < best) || (dir > 0 && v > best) {
			best, at = v, i
		}
	}
	if at >= 0 {
		c.Best, c.BestStep = formatValue(best), formatValue(s.Steps[at])
	}
	return c
}

// hparamCell is one run's value of a hyperparameter.
type hparamCell struct {
	Text    string
	Missing bool // the run has no such key
}

// hparamRow is one hyperparameter across runs; Differ is set when their
// values are not all the same.
type hparamRow struct {
	Key    string
	Values []hparamCell
	Differ bool
}

// hparamTable flattens the runs' hyperparameters (nested keys joined with
// dots) into rows, marking those whose value differs between runs.
func hparamTable(runs []*Run) (keys int, rows []hparamRow, diffs int) {
	flat := make([]map[string]string, len(runs))
	all := map[string]bool{}
	for i, r := range runs {
		flat[i] = map[string]string{}
		flatten("", r.Hparams, flat[i])
		for k := range flat[i] {
			all[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(all)) {
		row := hparamRow{Key: k, Values: make([]hparamCell, len(runs))}
		for i := range runs {
			v, ok := flat[i][k]
			row.Values[i] = hparamCell{Text: v, Missing: !ok}
			if i > 0 && row.Values[i] != row.Values[0] {
				row.Differ = true
			}
		}
		if row.Differ {
			diffs++
		}
		rows = append(rows, row)
	}
	return len(rows), rows, diffs
}

// flatten writes the leaves of a hyperparameter map into out: nested maps
// as dotted keys, lists and scalars as compact text.
func flatten(prefix string, m map[string]any, out map[string]string) {
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			flatten(key, sub, out)
			continue
		}
		out[key] = formatHparam(v)
	}
}

// formatHparam renders a hyperparameter value compactly.
func formatHparam(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(t), 'g', -1, 32)
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = formatHparam(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		parts := make([]string, 0, len(t))
		for _, k := range slices.Sorted(maps.Keys(t)) {
			parts = append(parts, k+": "+formatHparam(t[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

var pageTmpl = template.Must(template.New("page").Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="volt report">
<title>{{.Title}}</title>
<style>
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: #222; background: #f6f7f9; }
main { max-width: 1480px; margin: 0 auto; padding: 20px 24px 40px; }
h1 { font-size: 22px; margin: 0 0 4px; font-weight: 650; }
h2 { font-size: 16px; margin: 28px 0 10px; font-weight: 650; }
.sub { color: #666; margin: 0 0 8px; }
.notes { background: #fff8e5; border: 1px solid #f0d78c; border-radius: 6px; padding: 8px 12px 8px 28px; margin: 12px 0; }
.notes li { margin: 2px 0; }
.card { background: #fff; border: 1px solid #e3e5e8; border-radius: 8px; padding: 10px 12px; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 16px; }
@media (max-width: 600px) { .plots { grid-template-columns: 1fr; } main { padding: 12px; } }
svg.plot { display: block; width: 100%; height: auto; }
svg.plot .hit:hover { fill-opacity: 1; }
svg.plot circle:hover, svg.plot rect:hover, svg.plot path[fill]:hover { stroke: #222; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; background: #fff; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 12px; border-bottom: 1px solid #eceef1; text-align: left; vertical-align: top; }
th { background: #fafbfc; font-weight: 600; white-space: nowrap; }
td.num { text-align: right; white-space: nowrap; }
td.dir { color: #666; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; word-break: break-all; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; vertical-align: baseline; }
.best { color: #666; font-size: 12px; }
td.win { background: #e8f4ec; font-weight: 600; }
.muted { color: #999; }
tr.differ td, tr.differ th { background: #fff3d6; }
tr.differ th::after { content: " ≠"; color: #b36b00; }
#onlydiff:checked ~ .scroll tr.same { display: none; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
footer { color: #888; font-size: 12px; margin-top: 32px; }
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<p class="sub">{{len .Runs}} run{{if .Compare}}s compared{{end}} · {{len .Plots}} plot{{if ne (len .Plots) 1}}s{{end}} · x axis: optimizer step</p>
{{- if .Notes}}
<ul class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>
{{- end}}

<h2>Runs</h2>
<div class="scroll"><table class="runs">
<tr><th>run</th><th>directory</th><th>rows</th><th>last step</th><th>epochs</th><th>metrics</th><th>hparams</th></tr>
{{- range .Runs}}
<tr><td>{{if $.Compare}}<span class="swatch" style="background:{{.Color}}"></span>{{end}}{{.Name}}</td><td class="dir">{{.Dir}}</td><td class="num">{{.Rows}}</td><td class="num">{{.Steps}}</td><td class="num">{{.Epochs}}</td><td class="num">{{.Metrics}}</td><td class="num">{{if .Hparams}}{{.Hparams}}{{else}}<span class="muted">none</span>{{end}}</td></tr>
{{- end}}
</table></div>

{{- if .Values}}
<h2>Final and best values</h2>
<div class="scroll"><table class="values">
<tr><th>metric</th>{{if .Compare}}{{range .Runs}}<th><span class="swatch" style="background:{{.Color}}"></span>{{.Name}}</th>{{end}}{{else}}<th>final</th><th>best</th><th>best at step</th><th>values</th>{{end}}</tr>
{{- range .Values}}
<tr><th>{{.Metric}}{{if .Better}} <span class="muted">({{.Better}} is best)</span>{{end}}</th>
{{- if $.Compare}}{{range .Cells}}<td class="num{{if .Win}} win{{end}}">{{if .None}}<span class="muted">–</span>{{else}}{{.Final}}{{if .Best}} <span class="best">best {{.Best}} @ {{.BestStep}}</span>{{end}}{{if .NonFinite}} <span class="best">({{.NonFinite}} NaN/Inf)</span>{{end}}{{end}}</td>{{end}}
{{- else}}{{range .Cells}}<td class="num">{{.Final}}</td><td class="num">{{if .Best}}{{.Best}}{{else}}<span class="muted">–</span>{{end}}</td><td class="num">{{if .BestStep}}{{.BestStep}}{{else}}<span class="muted">–</span>{{end}}</td><td class="num">{{.Count}}{{if .NonFinite}} ({{.NonFinite}} NaN/Inf){{end}}</td>{{end}}{{end}}</tr>
{{- end}}
</table></div>
{{- end}}

<h2>Metrics</h2>
{{- if .Plots}}
<div class="plots">
{{- range .Plots}}
<figure class="card" style="margin:0">{{.}}</figure>
{{- end}}
</div>
{{- else}}
<p class="notes" style="padding-left:12px">No metrics to plot: the metrics.csv {{if .Compare}}files hold{{else}}file holds{{end}} no logged values.</p>
{{- end}}

{{- if .LRFinds}}
<h2>Learning-rate finder</h2>
<div class="plots">
{{- range .LRFinds}}
<figure class="card lr-find" style="margin:0"><figcaption>{{if $.Compare}}<span class="swatch" style="background:{{.Color}}"></span>{{.Run}}: {{end}}{{.Suggestion}}</figcaption>{{.SVG}}</figure>
{{- end}}
</div>
{{- end}}

<h2>Hyperparameters</h2>
{{- if .HparamRows}}
{{- if .Compare}}
<input type="checkbox" id="onlydiff"> <label for="onlydiff">show only the {{.HparamDiffs}} differing value{{if ne .HparamDiffs 1}}s{{end}}</label>
{{- end}}
<div class="scroll"><table class="hparams">
<tr><th>name</th>{{range .Runs}}<th>{{if $.Compare}}<span class="swatch" style="background:{{.Color}}"></span>{{.Name}}{{else}}value{{end}}</th>{{end}}</tr>
{{- range .HparamRows}}
<tr class="{{if .Differ}}differ{{else}}same{{end}}"><th><code>{{.Key}}</code></th>{{range .Values}}<td>{{if .Missing}}<span class="muted">–</span>{{else}}<code>{{.Text}}</code>{{end}}</td>{{end}}</tr>
{{- end}}
</table></div>
{{- else}}
<p class="sub">No hyperparameters were recorded (no hparams.yaml, or it is empty).</p>
{{- end}}

<footer>Generated by <code>volt report</code>. Hover a point for its value, step and epoch.</footer>
</main>
</body>
</html>
`
