package cli

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is one configuration problem: the key, where its value came from,
// what is wrong and, for an unknown key or name, the nearest valid one.
type Error struct {
	// Key is the dotted key ("trainer.max_epochs", "trainer.callbacks[0].monitor").
	Key string
	// File and Line locate the value when it came from a config file.
	File string
	Line int
	// Origin names the source otherwise: "flag --trainer.max_epochs",
	// "environment variable VOLT_TRAINER_MAX_EPOCHS".
	Origin string
	// Problem says what is wrong.
	Problem string
	// Suggestion is the nearest valid key or name, when Key or a name is unknown.
	Suggestion string
}

// Error formats the problem as "file:line: key: problem; did you mean X?".
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		fmt.Fprintf(&b, "%s: ", e.File)
	case e.Origin != "":
		fmt.Fprintf(&b, "%s: ", e.Origin)
	}
	if e.Key != "" && e.Origin != "flag --"+e.Key {
		fmt.Fprintf(&b, "%s: ", e.Key)
	}
	b.WriteString(e.Problem)
	if e.Suggestion != "" {
		fmt.Fprintf(&b, "; did you mean %s?", e.Suggestion)
	}
	return b.String()
}

// source is where values come from: a file, a flag or an environment
// variable.
type source struct {
	file   string // a config file; line numbers come from the nodes
	origin string // a flag or an environment variable
}

// at returns the location of node n of this source.
func (s source) at(n *yaml.Node) location {
	if s.file != "" {
		return location{file: s.file, line: lineOf(n)}
	}
	return location{origin: s.origin}
}

// errorAt returns an Error for key at node n of this source.
func (s source) errorAt(n *yaml.Node, key, format string, args ...any) *Error {
	return s.at(n).errorf(key, format, args...)
}

// location is where one value was given; the zero location is a default.
type location struct {
	file   string
	line   int
	origin string
}

// String returns "file:line", the origin, or "default".
func (l location) String() string {
	switch {
	case l.file != "":
		return fmt.Sprintf("%s:%d", l.file, l.line)
	case l.origin != "":
		return l.origin
	}
	return "default"
}

// errorf returns an Error for key at this location.
func (l location) errorf(key, format string, args ...any) *Error {
	return &Error{Key: key, File: l.file, Line: l.line, Origin: l.origin, Problem: fmt.Sprintf(format, args...)}
}

// lineOf returns n's line, 0 for nil.
func lineOf(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}
