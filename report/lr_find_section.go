package report

import (
	"fmt"
	"html/template"
)

// lrFind is a run's learning-rate finder curve on the page.
type lrFind struct {
	Run, Color string
	Suggestion string
	SVG        template.HTML
}

// lrFindSection draws run's curve with its suggestion.
func lrFindSection(r *Run, color string) (lrFind, error) {
	c := *r.LRFind
	svg, err := LRCurveSVG(c)
	if err != nil {
		return lrFind{}, err
	}
	sugg := fmt.Sprintf("no suggestion (%d points are too few)", len(c.LRs))
	if i := c.Suggested; i >= 0 && i < len(c.LRs) {
		sugg = fmt.Sprintf("suggested learning rate %s (step %d of %d, loss %s)", formatValue(c.LRs[i]), i, len(c.LRs), formatValue(c.Losses[i]))
	}
	return lrFind{Run: r.Name, Color: color, Suggestion: sugg, SVG: template.HTML(svg)}, nil
}
