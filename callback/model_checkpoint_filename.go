package callback

import (
	"fmt"
	"regexp"
	"strings"
)

// This file is ModelCheckpoint's file naming: the Filename template.

// filenameTemplate is a parsed ModelCheckpointConfig.Filename: literal text
// and placeholders, rendered with the metric values of one save.
type filenameTemplate []filenamePart

// filenamePart is a literal (name == "") or a placeholder.
type filenamePart struct {
	literal string
	name    string // the metric
	prefix  string // "name=" when metric names are inserted
	format  string // fmt format of the value
	integer bool   // the value is formatted as an integer
}

// formatSpec is the subset of Python's format spec a placeholder may carry:
// [0][width][.precision][type], type one of d, f, e, E, g, G.
var formatSpec = regexp.MustCompile(`^(0?)([1-9][0-9]*)?(?:\.([0-9]+))?([dfeEgG]?)$`)

// parseFilename parses a template such as "{epoch}-{val_loss:.2f}". With
// insertNames, "{val_loss}" renders as "val_loss=0.1234" (a "/" in the name
// becomes "_" there, so the file stays in the directory).
func parseFilename(tmpl string, insertNames bool) (filenameTemplate, error) {
	var out filenameTemplate
	rest := tmpl
	for rest != "" {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			out = append(out, filenamePart{literal: rest})
			break
		}
		if open > 0 {
			out = append(out, filenamePart{literal: rest[:open]})
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("%q: unclosed %q", tmpl, rest[open:])
		}
		inner := rest[open+1 : open+end]
		rest = rest[open+end+1:]
		p, err := parsePlaceholder(inner, insertNames)
		if err != nil {
			return nil, fmt.Errorf("%q: placeholder {%s}: %w", tmpl, inner, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// parsePlaceholder parses "name" or "name:spec".
func parsePlaceholder(inner string, insertNames bool) (filenamePart, error) {
	name, spec, hasSpec := strings.Cut(inner, ":")
	name = strings.TrimSpace(name)
	if name == "" || strings.Contains(name, "{") {
		return filenamePart{}, fmt.Errorf("needs a metric name, such as {epoch}, {step} or {val_loss:.4f}")
	}
	p := filenamePart{name: name, format: "%.4f"}
	if name == "epoch" || name == "step" {
		p.format, p.integer = "%d", true
	}
	if insertNames {
		p.prefix = strings.ReplaceAll(name, "/", "_") + "="
	}
	if !hasSpec || spec == "" {
		return p, nil
	}
	g := formatSpec.FindStringSubmatch(spec)
	if g == nil {
		return filenamePart{}, fmt.Errorf("unsupported format spec %q; valid: [0][width][.precision][d|f|e|E|g|G], e.g. \".4f\" or \"03d\"", spec)
	}
	zero, width, prec, verb := g[1], g[2], g[3], g[4]
	switch {
	case verb == "d" && prec != "":
		return filenamePart{}, fmt.Errorf("format spec %q: an integer (d) takes no precision", spec)
	case verb == "" && prec != "":
		verb = "g"
	case verb == "" && p.integer:
		verb = "d"
	case verb == "":
		verb, prec = "f", "4"
	}
	p.integer = verb == "d"
	p.format = "%" + zero + width
	if prec != "" {
		p.format += "." + prec
	}
	p.format += verb
	return p, nil
}

// render returns the file name (without extension) for the given metric
// values; a placeholder whose metric is missing renders 0, as in Lightning.
func (ft filenameTemplate) render(values map[string]float64) string {
	var b strings.Builder
	for _, p := range ft {
		if p.name == "" {
			b.WriteString(p.literal)
			continue
		}
		v := values[p.name]
		b.WriteString(p.prefix)
		if p.integer {
			fmt.Fprintf(&b, p.format, int64(v))
		} else {
			fmt.Fprintf(&b, p.format, v)
		}
	}
	return b.String()
}
